"""What a platform's package gives the main process to run its bots: a `PlatformKind` (its
profile, and how to make one workspace's `Bot`), which its `Platform` loads
(`adapters/platform.py`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from adapters.intake.record import Put
from bridge.attachments.source import FileSource
from bridge.platform import PlatformProfile
from bridge.service import Bridge
from bridge.store.records import StoredRequest
from bridge.transport import Transport
from config.schema import WorkspaceConfig


class Bot(Protocol):
    """One workspace's bot on one platform."""

    @property
    def transport(self) -> Transport: ...

    @property
    def files(self) -> FileSource | None: ...

    @property
    def running(self) -> bool:
        """Started, and not stopped: what is stored for it can be decoded."""
        ...

    async def start(self, public_url: str | None) -> None:
        """Raises `ConfigError` for a credential refused, `PlatformUnreachable` when the
        platform cannot be reached."""
        ...

    async def stop(self) -> None: ...

    async def decode(self, request: StoredRequest) -> None:
        """A request its door stored, decoded with the platform's library into the bridge's
        inbound messages and handed to the bridge."""
        ...


@dataclass(frozen=True, slots=True)
class PlatformKind:
    profile: PlatformProfile
    bot: Callable[[Bridge, WorkspaceConfig, Put], Bot]
    max_file_bytes: int | None  # the most its bots may download

    @property
    def name(self) -> str:
        return self.profile.name
