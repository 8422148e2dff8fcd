"""What enters a session: messages, their classification, and their queue entries (DESIGN §2)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from runtime.transcript import AttachmentBlock


class MessageKind(StrEnum):
    OPERATOR_PROMPT = "operator_prompt"
    CHANNEL_EVENT = "channel_event"
    TIMER_TICK = "timer_tick"
    TASK_REQUEST = "task_request"
    TASK_RESULT = "task_result"
    CONTROL = "control"


class Origin(StrEnum):
    OPERATOR = "operator"
    CHANNEL = "channel"
    TIMER = "timer"
    SYSTEM = "system"
    TASK = "task"


class Trust(StrEnum):
    TRUSTED_OPERATOR = "trusted_operator"
    TRUSTED_SYSTEM = "trusted_system"
    TRUSTED_INTEGRATION = "trusted_integration"
    UNTRUSTED_EXTERNAL = "untrusted_external"


class AuthorityClass(StrEnum):
    OPERATOR = "operator"
    SYSTEM = "system"
    INTEGRATION = "integration"
    EXTERNAL = "external"


_AUTHORITY_BY_TRUST = {
    Trust.TRUSTED_OPERATOR: AuthorityClass.OPERATOR,
    Trust.TRUSTED_SYSTEM: AuthorityClass.SYSTEM,
    Trust.TRUSTED_INTEGRATION: AuthorityClass.INTEGRATION,
    Trust.UNTRUSTED_EXTERNAL: AuthorityClass.EXTERNAL,
}


class Priority(StrEnum):
    """Queue lanes, highest first; FIFO within a lane."""

    INTERJECT = "interject"
    NEXT = "next"
    NORMAL = "normal"
    BACKGROUND = "background"


LANE_ORDER: tuple[Priority, ...] = tuple(Priority)


class QueueStatus(StrEnum):
    ARRIVED = "arrived"  # stored for a session another replica runs: admitted there
    QUEUED = "queued"
    DEQUEUED = "dequeued"
    PROCESSED = "processed"
    INTERJECTED = "interjected"
    ABORTED = "aborted"
    DROPPED = "dropped"


class QueueMode(StrEnum):
    STEER = "steer"
    FOLLOWUP = "followup"
    COLLECT = "collect"
    INTERRUPT = "interrupt"


class DropPolicy(StrEnum):
    OLDEST = "oldest"
    NEWEST = "newest"


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where a message came from; kept on the queue entry and in rendered interjections."""

    sender: str | None = None
    surface: str | None = None
    binding: str | None = None
    platform_message_ref: str | None = None
    reply_route: dict[str, Any] | None = None
    correlation_id: str | None = None
    causation_id: str | None = None
    # Who pays for the turn it starts, when not its sender: a wake-up's and a child's turns
    # are charged to whoever paid for the turn that asked for them (runtime/spend.py).
    charged_to: str | None = None
    # Said in the sender's private chat with the agent (a DM, the console): what the turn it
    # starts may see and keep of that operator's own memories (runtime/recall.py).
    private: bool = False
    # Carries text someone else wrote besides its sender's words (a quote, a forward, the
    # messages of a thread): what a turn keeps of it is marked as from untrusted text.
    passed_on: bool = False

    @property
    def payer(self) -> str | None:
        return self.charged_to or self.sender

    def to_json(self) -> dict[str, Any]:
        return {
            k: v for k in self.__slots__ if (v := getattr(self, k)) is not None and v is not False
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Provenance:
        """What was stored; a key stored before it existed takes its default."""
        return cls(**{k: data[k] for k in cls.__slots__ if data.get(k) is not None})


@dataclass(frozen=True, slots=True)
class InboundMessage:
    """A message as a caller submits it. Trust is the caller's finding; authority is derived."""

    text: str
    kind: MessageKind = MessageKind.OPERATOR_PROMPT
    origin: Origin = Origin.OPERATOR
    trust: Trust = Trust.TRUSTED_OPERATOR
    priority: Priority = Priority.INTERJECT
    delivery_surface: str | None = None
    admission_context: str | None = None
    provenance: Provenance = field(default_factory=Provenance)
    # Files that came with it, by reference; `Runtime.submit` stores their bytes with it.
    attachments: tuple[AttachmentBlock, ...] = ()
    # At most this many model rounds for the turn it starts (a schedule's own cap); None: the
    # runtime's.
    max_rounds: int | None = None

    @property
    def authority_class(self) -> AuthorityClass:
        return _AUTHORITY_BY_TRUST[self.trust]


@dataclass(slots=True)
class QueueEntry:
    """A stored message and its place in a session's queue."""

    id: str
    session_id: str
    seq: int
    message: InboundMessage
    status: QueueStatus
    created_at: float
    run_id: str | None = None
    boundary: str | None = None


def may_interject(message: InboundMessage) -> bool:
    """Only a trusted operator's prompt, sent with interject priority, may enter a running turn."""
    return (
        message.kind is MessageKind.OPERATOR_PROMPT
        and message.origin is Origin.OPERATOR
        and message.trust is Trust.TRUSTED_OPERATOR
        and message.priority is Priority.INTERJECT
    )
