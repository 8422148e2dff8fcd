"""The audit ledger's event types and the live feed the bridge subscribes to."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class EventType(StrEnum):
    SESSION_CREATED = "session_created"
    QUEUE_MODE_CHANGED = "queue_mode_changed"
    MESSAGE_QUEUED = "message_queued"
    MESSAGE_DROPPED = "message_dropped"
    TURN_STARTED = "turn_started"
    PROGRESS = "progress"
    ASSISTANT_TEXT_DELTA = "assistant_text_delta"
    ASSISTANT_TEXT = "assistant_text"
    TOOL_STARTED = "tool_started"
    TOOL_FINISHED = "tool_finished"
    OPERATOR_INTERJECTION_ADMITTED = "operator_interjection_admitted"
    INTERJECTION_DRAIN_FAILED = "interjection_drain_failed"
    OPERATOR_NOTIFICATION_REQUESTED = "operator_notification_requested"
    CHILD_SPAWNED = "child_spawned"
    PROVIDER_RETRY = "provider_retry"
    PROVIDER_REQUEST_REFUSED = "provider_request_refused"
    RUN_RECOVERED = "run_recovered"
    TURN_FINISHED = "turn_finished"


# Deltas are shown live but not stored: the final text of each round is.
EPHEMERAL = frozenset({EventType.ASSISTANT_TEXT_DELTA})


def event_type(name: str) -> str:
    """The runtime's own types come back as EventType members; other layers' stay strings."""
    return EventType(name) if name in EventType._value2member_map_ else name


@dataclass(slots=True)
class Event:
    type: str  # an EventType, or a type of a layer above (the bridge's audit events)
    session_id: str | None
    data: dict[str, Any] = field(default_factory=dict)
    run_id: str | None = None
    at: float = 0.0
    seq: int | None = None  # set when the ledger commits it; None for ephemeral events


ReadAfter = Callable[[int], Awaitable[list[Event]]]


class EventFeed:
    """Fan-out of committed (and ephemeral) events to live subscribers."""

    def __init__(self, read_after: ReadAfter) -> None:
        self._read_after = read_after
        self._subscribers: set[asyncio.Queue[Event | None]] = set()

    def publish(self, events: list[Event]) -> None:
        for queue in self._subscribers:
            for event in events:
                queue.put_nowait(event)

    def close(self) -> None:
        for queue in self._subscribers:
            queue.put_nowait(None)

    async def subscribe(self, after_seq: int | None = None) -> AsyncIterator[Event]:
        """Stored events after `after_seq` (if given), then every new event as it happens."""
        queue: asyncio.Queue[Event | None] = asyncio.Queue()
        self._subscribers.add(queue)
        try:
            last = -1
            if after_seq is not None:
                last = after_seq
                for event in await self._read_after(after_seq):
                    last = event.seq if event.seq is not None else last
                    yield event
            while (live := await queue.get()) is not None:
                if live.seq is not None and live.seq <= last:
                    continue
                yield live
        finally:
            self._subscribers.discard(queue)
