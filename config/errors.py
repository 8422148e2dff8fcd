"""The root of Switchboard's exception tree.

It lives in `config`, the leaf package every layer may import, so that runtime, bridge
and adapter errors can all share one root without breaking the import direction.
"""

import os
from pathlib import Path
from urllib.parse import urlsplit


class SwitchboardError(Exception):
    """Base class of every error Switchboard raises on purpose."""


class ConfigError(SwitchboardError, ValueError):
    """The admin's configuration is invalid; the message says where and how to fix it."""


class CredentialRefused(SwitchboardError):
    """A platform or the model refused a credential; the message is the platform's own
    reason."""


class PlatformUnreachable(SwitchboardError):
    """A platform or the model API could not be reached (connection refused, timeout, a name
    that does not resolve, an error answer from a proxy): nothing was checked. Told apart
    from CredentialRefused, since a right token must not be typed again for a network down."""

    def __init__(
        self, platform: str, url: str, reason: str, *, where: str = "", then: str = ""
    ) -> None:
        """`where` goes before the message (`workspace main`), `then` after it (what it
        means and what to do)."""
        self.platform = platform
        self.host = urlsplit(url).netloc or url
        self.reason = reason or "no answer"
        text = f"could not reach {platform} at {self.host} ({self.reason})"
        if where:
            text = f"{where}: {text}"
        super().__init__(f"{text}; {then}" if then else text)


def without_folder(message: str, path: Path) -> str:
    """`message` with the folder of the config file `path` taken out wherever it names it
    (as given, and absolute): the file (and the env file beside it) by its name alone, for
    a reader who is not the server's admin (a workspace's admin, in the console)."""
    folders = {str(path.parent), str(path.parent.resolve()), str(path.parent.absolute())}
    for folder in sorted(folders - {"", "."}, key=len, reverse=True):
        message = message.replace(folder.rstrip(os.sep) + os.sep, "")
    return message
