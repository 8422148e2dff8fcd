"""The audit ledger: typed event payloads, the events that carry them, and the live feed.

Each event type has one payload model (`runtime/payloads.py` for the runtime's, a layer
above adds its own by subclassing `Payload`). The ledger stores the payload as JSON; readers
get the typed payload back, so `match event.data: case TurnFinished(...)` is how a reader
tells events apart.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, ValidationError

log = logging.getLogger(__name__)


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
    CONTEXT_COMPACTED = "context_compacted"
    APPROVAL_REQUESTED = "approval_requested"
    APPROVAL_DECIDED = "approval_decided"
    WAKEUP_SCHEDULED = "wakeup_scheduled"
    WAKEUP_FIRED = "wakeup_fired"
    WAKEUP_CANCELLED = "wakeup_cancelled"
    SPEND_HELD = "spend_held"
    SPEND_RELEASED = "spend_released"
    MEMORY_FORGOTTEN = "memory_forgotten"
    MEMORY_EVICTED = "memory_evicted"
    MEMORY_OFFERED = "memory_offered"
    MESSAGE_ARRIVED = "message_arrived"
    STOP_ASKED = "stop_asked"
    SESSION_ASKED = "session_asked"


_PAYLOADS: dict[str, type[Payload]] = {}


class Payload(BaseModel):
    """What an event says. Subclasses set `TYPE` and are registered by it."""

    model_config = ConfigDict(frozen=True)

    TYPE: ClassVar[str]
    EPHEMERAL: ClassVar[bool] = False  # shown live, never stored
    # Other replicas must hear of it at once (a payload-free NOTIFY after its commit); the
    # rest reach their feeds at their own next commit, or within `publishing.BACKSTOP_S`.
    HINT: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        type_name = cls.__dict__.get("TYPE")
        if type_name is not None:
            if type_name in _PAYLOADS:
                raise TypeError(f"two payloads for event type {type_name!r}")
            _PAYLOADS[type_name] = cls

    @property
    def event_type(self) -> str:
        return self.TYPE

    @staticmethod
    def decode(type_name: str, data: str) -> Payload:
        """A stored payload, typed again. One this code cannot type (a newer version wrote a
        type or a field it does not know) is kept as it was, never dropped."""
        model = _PAYLOADS.get(type_name)
        if model is not None:
            try:
                return model.model_validate_json(data)
            except ValidationError as exc:
                log.warning(
                    "stored event does not match its payload",
                    extra={"event_type": type_name, "problems": exc.error_count()},
                )
        return Unrecognized(type_name=type_name, data=Unrecognized.raw(data))


class Unrecognized(Payload):
    """A stored event this code cannot type, with its data as stored."""

    type_name: str
    data: dict[str, Any]

    @property
    def event_type(self) -> str:
        return self.type_name

    @staticmethod
    def raw(data: str) -> dict[str, Any]:
        value = json.loads(data)
        return value if isinstance(value, dict) else {"value": value}

    def to_json(self) -> str:
        return json.dumps(self.data, separators=(",", ":"), ensure_ascii=False)


@dataclass(slots=True)
class Event:
    data: Payload
    session_id: str | None = None
    run_id: str | None = None
    at: float = 0.0
    seq: int | None = None  # set when the ledger commits it; None for ephemeral events

    @property
    def type(self) -> str:
        return self.data.event_type

    def data_json(self) -> str:
        if isinstance(self.data, Unrecognized):
            return self.data.to_json()
        return self.data.model_dump_json()


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
