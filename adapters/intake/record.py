"""What a door stores, and what decodes it once stored."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol

from bridge.store.records import NewRequest, StoredRequest


@dataclass(frozen=True, slots=True)
class Arrival:
    """A request from outside, checked at its door."""

    platform: str
    workspace_id: str
    place: str  # the conversation: its requests are handed on in the order they came
    dedupe_key: str | None  # the platform's id of it: a retry is stored once
    body: str
    verified: str  # what the door checked: "slack signature", "telegram secret token", ...
    headers: dict[str, str] = field(default_factory=dict)
    query: str = ""

    @property
    def key(self) -> str | None:
        """The platform id, unique across platforms and workspaces."""
        if self.dedupe_key is None:
            return None
        return f"{self.platform}:{self.workspace_id}:{self.dedupe_key}"

    @property
    def request(self) -> NewRequest:
        """As the intake table stores it (`bridge/store/intake.py`)."""
        return NewRequest(
            *(self.platform, self.workspace_id, self.place, self.key),
            *(self.body, self.headers, self.query, self.verified),
        )


Put = Callable[[Arrival], Awaitable[bool]]
"""Store an arrival; False: a copy with its platform id is stored already (a retry). Raises
when the store fails: the door answers 5xx and the platform sends it again."""


class NotReady(Exception):
    """The workspace's bot is not running here yet (starting, or restarting in a reload): the
    request waits for it, in order, without spending an attempt."""


class Decoder(Protocol):
    """A platform's side of the replay: a stored request decoded with the platform's library
    into the bridge's inbound messages and handed to the bridge. Raises `NotReady` while the
    workspace's bot is not up."""

    async def decode(self, request: StoredRequest) -> None: ...


class Intake(Protocol):
    """Where checked requests wait to be handed on, oldest first."""

    async def put(self, arrival: Arrival) -> bool: ...

    async def pending(self, after_id: int, limit: int) -> list[StoredRequest]:
        """The oldest `limit` stored after `after_id` (ids grow in the order requests were
        stored: one writer at a time, on either engine)."""
        ...

    async def done(self, ids: list[int]) -> None: ...

    async def failed(self, request_id: int, error: str) -> None: ...
