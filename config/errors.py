"""The root of Switchboard's exception tree.

It lives in `config`, the leaf package every layer may import, so that runtime, bridge
and adapter errors can all share one root without breaking the import direction.
"""

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
