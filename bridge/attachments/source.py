"""What a platform adapter offers for files: downloading one with the bot's own credentials.
The bridge never sees a platform's URL shapes or tokens, only this."""

from __future__ import annotations

from typing import Protocol

from bridge.types import InboundFile
from config.errors import SwitchboardError


class FetchError(SwitchboardError):
    """A download failed. `retryable`: it may work later (a timeout, a 5xx, a 429); else the
    platform refused it for good (gone, forbidden, too large for a bot)."""

    def __init__(self, message: str, *, retryable: bool) -> None:
        super().__init__(message)
        self.retryable = retryable


class FileSource(Protocol):
    platform: str  # the `PlatformProfile.name` it serves
    max_bytes: int | None  # the most this platform lets a bot download (Telegram: 20 MB)

    async def fetch(self, workspace_id: str, file: InboundFile, max_bytes: int) -> bytes:
        """The file's bytes, downloaded with the workspace bot's credentials. Raises
        FetchError; one over `max_bytes` is refused without being read to its end."""
        ...

    async def describe(self, workspace_id: str, file: InboundFile) -> InboundFile:
        """`file` with its name, type, size and URL, asked of the platform when the message
        did not carry them. Raises FetchError."""
        ...
