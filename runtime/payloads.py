"""The runtime's event payloads: one model per `EventType`, each built in one place."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from runtime.boundaries import Boundary
from runtime.events import EventType, Payload
from runtime.messages import MessageKind, Origin, Priority, QueueMode, Trust
from runtime.records import (
    AgentProfile,
    ApprovalStatus,
    NotificationRecord,
    OperatorBoundary,
    RunStatus,
)
from runtime.scheduler import DecisionKind, SubmitStatus
from runtime.spend import HoldKind
from runtime.tools.envelope import ToolStatus


class ProgressState(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    WAITING = "waiting"
    CANCEL_REQUESTED = "cancel_requested"


def thinking_step(round_no: int) -> str:
    """A model round's progress step, as the operator reads it under the progress line."""
    return "thinking" if round_no == 1 else f"thinking (round {round_no})"


# The `sleep` tool listening for the operator while it waits.
LISTENING_STEP = "waiting; a message from you wakes it"


class SessionCreated(Payload):
    TYPE: ClassVar[str] = EventType.SESSION_CREATED
    agent_id: str
    profile: AgentProfile
    parent_session_id: str | None


class MessageArrived(Payload):
    """A message stored for a session this replica does not run: the replica holding the
    session's lease (or the one that takes it) admits it there (`runtime/homes.py`)."""

    TYPE: ClassVar[str] = EventType.MESSAGE_ARRIVED
    HINT: ClassVar[bool] = True
    message_id: str


class StopAsked(Payload):
    """A stop of a turn running on another replica: the replica running it stops it."""

    TYPE: ClassVar[str] = EventType.STOP_ASKED
    HINT: ClassVar[bool] = True
    run_id: str
    reason: str
    silent: bool = False  # with its parent: no task_result goes back


class SessionAction(StrEnum):
    APPROVE_SPEND = "approve_spend"  # /approve_spend: its held turn goes on
    CANCEL_WAKEUPS = "cancel_wakeups"  # /stop, /new: its pending and queued wake-ups
    COMPACT = "compact"  # /compact
    LEAVE = "leave"  # /new: what should last of the session kept


class SessionAsked(Payload):
    """Something asked of a session another replica runs: done there, as if asked there."""

    TYPE: ClassVar[str] = EventType.SESSION_ASKED
    HINT: ClassVar[bool] = True
    action: SessionAction
    by: str = ""
    retire: bool = False  # CANCEL_WAKEUPS on /new: the session sets no more


class QueueModeChanged(Payload):
    TYPE: ClassVar[str] = EventType.QUEUE_MODE_CHANGED
    mode: QueueMode | None


class MessageQueued(Payload):
    TYPE: ClassVar[str] = EventType.MESSAGE_QUEUED
    message_id: str
    kind: MessageKind
    origin: Origin
    trust: Trust
    authority_class: str
    priority: Priority
    decision: DecisionKind
    reason: str
    status: SubmitStatus
    sender: str | None


class MessageDropped(Payload):
    TYPE: ClassVar[str] = EventType.MESSAGE_DROPPED
    message_id: str
    reason: str
    sender: str | None
    reply_route: dict[str, Any] | None
    text: str


class TurnStarted(Payload):
    TYPE: ClassVar[str] = EventType.TURN_STARTED
    HINT: ClassVar[bool] = True  # the sending replica shows it (progress, /status) at once
    message_ids: list[str]
    model: str
    mode: QueueMode
    resumed: bool


class Progress(Payload):
    """The live state of a session's turn (built by `RunHandle.progress`, or `queued`)."""

    TYPE: ClassVar[str] = EventType.PROGRESS
    state: ProgressState
    step: str
    elapsed_s: float

    @classmethod
    def queued(cls) -> Progress:
        """An idle session has work: a turn is about to start."""
        return cls(state=ProgressState.QUEUED, step="waiting to start", elapsed_s=0.0)


class AssistantTextDelta(Payload):
    TYPE: ClassVar[str] = EventType.ASSISTANT_TEXT_DELTA
    EPHEMERAL: ClassVar[bool] = True  # shown live; the round's final text is stored
    delta: str
    # What streamed so far this round is no answer (a failed attempt's, retried or fallen
    # back from): what is shown of it goes, and the answer starts afresh.
    restart: bool = False


class AssistantText(Payload):
    TYPE: ClassVar[str] = EventType.ASSISTANT_TEXT
    text: str
    round: int
    tool_calls: int
    # A call sets a wake-up: if it does, the turn ends with these words as its answer.
    wakeup: bool = False


class ToolStarted(Payload):
    TYPE: ClassVar[str] = EventType.TOOL_STARTED
    tool_use_id: str
    name: str
    input: dict[str, Any]


class ToolFinished(Payload):
    TYPE: ClassVar[str] = EventType.TOOL_FINISHED
    tool_use_id: str
    name: str
    status: ToolStatus
    summary: str


class InterjectionAdmitted(Payload):
    TYPE: ClassVar[str] = EventType.OPERATOR_INTERJECTION_ADMITTED
    message_id: str
    boundary: Boundary
    sender: str | None


class InterjectionDrainFailed(Payload):
    TYPE: ClassVar[str] = EventType.INTERJECTION_DRAIN_FAILED
    boundary: Boundary
    message_ids: list[str]
    error: str


class NotificationRequested(Payload):
    TYPE: ClassVar[str] = EventType.OPERATOR_NOTIFICATION_REQUESTED
    HINT: ClassVar[bool] = True  # delivered by the replica that sends, at once
    notification_id: str
    agent_id: str
    requested_by_agent_id: str
    requested_by_session_id: str
    target_operator_boundary: OperatorBoundary
    message: str
    summary: str
    created_at: float

    @classmethod
    def of(cls, n: NotificationRecord) -> NotificationRequested:
        """The event of a stored notification: as it is recorded, and as an admin sends it
        to another operator."""
        return cls(
            notification_id=n.notification_id,
            agent_id=n.agent_id,
            requested_by_agent_id=n.requested_by_agent_id,
            requested_by_session_id=n.requested_by_session_id,
            target_operator_boundary=n.target_operator_boundary,
            message=n.message,
            summary=n.summary,
            created_at=n.created_at,
        )


class ApprovalRequested(Payload):
    """A tool call waits for an operator's approval: the buttons go (again, with `reshown`,
    after a restart) to the turn's operator route."""

    TYPE: ClassVar[str] = EventType.APPROVAL_REQUESTED
    HINT: ClassVar[bool] = True  # its buttons go out from the replica that sends, at once
    approval_id: str
    tool_use_id: str
    tool: str
    input: dict[str, Any]
    agent_id: str
    deadline: float
    timeout_s: float
    reshown: bool = False


class ApprovalDecided(Payload):
    TYPE: ClassVar[str] = EventType.APPROVAL_DECIDED
    HINT: ClassVar[bool] = True  # the turn waiting for it may run on another replica
    approval_id: str
    tool: str
    status: ApprovalStatus
    decided_by: str | None  # the operator; None when the time ran out or the turn stopped


class ChildSpawned(Payload):
    TYPE: ClassVar[str] = EventType.CHILD_SPAWNED
    child_session_id: str
    child_agent_id: str
    task: str


class ProviderRetry(Payload):
    TYPE: ClassVar[str] = EventType.PROVIDER_RETRY
    attempt: int
    delay_s: float
    error: str


class ProviderRequestRefused(Payload):
    TYPE: ClassVar[str] = EventType.PROVIDER_REQUEST_REFUSED
    problems: list[str]


class RunRecovered(Payload):
    TYPE: ClassVar[str] = EventType.RUN_RECOVERED
    status: RunStatus


class FallbackStanding(BaseModel):
    """A session off its agent's first provider when its turn ended: the one it is on, and
    the first's state as the replica running it saw it (`Models.standing`)."""

    model_config = ConfigDict(frozen=True)

    current: str  # the candidate's label, name:model
    primary: str
    state: str  # cooldowns.State
    until: float | None
    failure: str | None


class TurnFinished(Payload):
    TYPE: ClassVar[str] = EventType.TURN_FINISHED
    HINT: ClassVar[bool] = True  # its answer goes out from the replica that sends, at once
    outcome: RunStatus
    final_text: str
    error: str | None
    duration_s: float
    message_ids: list[str]
    # What the turn's model requests cost (0 in events from before they were recorded).
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    context_tokens: int | None = None  # the size of its last request
    # Off its first provider then (None: on it, or no chain): what /status says of it on a
    # replica that does not run the session (`runtime/across.py`).
    fallback: FallbackStanding | None = None
    resumed: bool = False  # it went on after a restart cut it off (as its `TurnStarted` says)


class ContextCompacted(Payload):
    """Older rows of the transcript now reach the model as a summary (runtime/compaction.py)."""

    TYPE: ClassVar[str] = EventType.CONTEXT_COMPACTED
    rows: int
    tokens_before: int
    tokens_after: int
    record_chars: int
    summary_chars: int
    fallback: bool  # the summary request failed: the rows were left out with a marker
    error: str | None
    requested: bool  # by the operator (/compact), not because the context was full


class WakeupScheduled(Payload):
    """The agent ends its turn to pick up again at `due_at` (wall time), with `note`."""

    TYPE: ClassVar[str] = EventType.WAKEUP_SCHEDULED
    wakeup_id: str
    due_at: float
    note: str


class WakeupFired(Payload):
    TYPE: ClassVar[str] = EventType.WAKEUP_FIRED
    wakeup_id: str
    message_id: str
    late_s: float  # after its due time, e.g. the time the process was down


class WakeupCancelled(Payload):
    TYPE: ClassVar[str] = EventType.WAKEUP_CANCELLED
    wakeup_id: str
    by: str


class SpendHeld(Payload):
    """A turn's next model call would pass a budget: the turn waits (`kind` "wait") for
    /approve-spend, a raised limit or the next period, or ends ("end": a schedule's own
    limit)."""

    TYPE: ClassVar[str] = EventType.SPEND_HELD
    kind: HoldKind
    budget: str  # the limit's key, e.g. "workspace/day"
    reason: str
    until: float | None  # wall time the period ends
    payer: str | None
    agent_id: str


class SpendReleased(Payload):
    """A held turn goes on: an operator approved its spend (`by`), or the limit allows it."""

    TYPE: ClassVar[str] = EventType.SPEND_RELEASED
    by: str | None  # the operator who approved; None: the budget allows it again


class MemoryForgotten(Payload):
    """A memory was forgotten (its row and index entry removed, a tombstone left), by the
    model's `forget` or an operator (`by`). Never its text: forgotten means gone."""

    TYPE: ClassVar[str] = EventType.MEMORY_FORGOTTEN
    memory_id: str
    agent_id: str
    scope: str
    operator_id: str | None
    by: str


class MemoryEvicted(Payload):
    """A scope of an agent's memory was full: keeping `kept_id` removed the least used and
    oldest (`memory_ids`) to stay within `limit`. Never their text."""

    TYPE: ClassVar[str] = EventType.MEMORY_EVICTED
    agent_id: str
    scope: str
    operator_id: str | None
    limit: int
    memory_ids: list[str]
    kept_id: str


class MemoryOffered(Payload):
    """A turn of an agent that keeps memory started: how many memories its first message
    recalled and were offered at its head, and about how many tokens of the request they
    took (0 and 0: none matched). Never their text. For /metrics only, so shown live and never
    stored: a write of its own would be one more turn of the fleet's write lock a turn."""

    TYPE: ClassVar[str] = EventType.MEMORY_OFFERED
    EPHEMERAL: ClassVar[bool] = True
    agent_id: str
    memories: int
    tokens: int
