"""What the admin console shows of a workspace, as typed rows (read by `view.py`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from bridge.admin.board import Board
from bridge.connections import Connection
from bridge.store.records import AdminActionRecord
from bridge.types import DeliveryKind, DeliveryStatus
from runtime.messages import QueueMode
from runtime.records import AgentProfile
from runtime.results import SessionState

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ConnectionRow:
    platform: str
    mode: str  # how it receives: "polling", "webhook", "http", "socket mode", "stdin"
    up: bool
    last_error: str | None
    last_error_at: float | None
    last_event_at: float | None
    last_ok_at: float | None

    @classmethod
    def of(cls, c: Connection, mode: str, error: str | None) -> ConnectionRow:
        return cls(c.platform, mode, c.up, error, c.last_error_at, c.last_event_at, c.last_ok_at)


@dataclass(frozen=True, slots=True)
class SessionRow:
    """One session as the overview's table (and the live feed) shows it."""

    session_id: str
    agent_id: str
    profile: AgentProfile
    parent_session_id: str | None
    where: str  # its conversation in words (a child agent's: its parent's)
    who: str | None  # who wrote there last
    state: SessionState
    mode: QueueMode
    queued: int
    run_id: str | None
    step: str | None  # the runtime's name for the turn's step
    elapsed_s: float | None
    doing: str  # what it does now and for how long, as the board says it (`bridge.activity`)
    name: str = ""  # the session as people know it (`bridge/session_names.py`)

    def to_json(self) -> dict[str, Any]:
        return {
            "session": self.session_id,
            "name": self.name,
            "agent": self.agent_id,
            "where": self.where,
            "who": self.who,
            "state": self.state.value,
            "mode": self.mode.value,
            "queued": self.queued,
            "run": self.run_id,
            "step": self.step,
            "doing": self.doing,
            "elapsed_s": self.elapsed_s,
        }


@dataclass(frozen=True, slots=True)
class Capped:
    """A text as a page shows it: at most so many characters; `length` the whole text's
    when it was cut."""

    text: str
    length: int | None = None

    @classmethod
    def of(cls, text: str, limit: int) -> Capped:
        return cls(text) if len(text) <= limit else cls(text[:limit], len(text))


@dataclass(frozen=True, slots=True)
class ToolCallLine:
    """One tool call, folded to a line (name, short input, outcome, duration) that opens to
    its whole input and result."""

    tool_use_id: str
    name: str
    short_input: str
    outcome: str  # "ok", "error", "denied", "timed out", "stopped", "running", ...
    duration: str  # "1.2 s"; empty while it runs
    input: Capped
    result: Capped | None  # None until it has finished


@dataclass(frozen=True, slots=True)
class Said:
    """What someone said in a turn: an operator's message, or the agent's answer."""

    who: str  # "alice", "agent"
    role: str  # "operator", "agent", "other" (a task from a parent agent, an event ...)
    text: Capped


@dataclass(frozen=True, slots=True)
class Step:
    """One model round of a turn: what the agent said (None: nothing), the tools it called."""

    said: Said | None
    calls: list[ToolCallLine]


@dataclass(frozen=True, slots=True)
class TurnView:
    """One turn of a session: the messages it took, the agent's rounds (its answer last),
    and how it ended."""

    run_id: str
    started_at: float
    status: str  # the run's: "running", "completed", "failed", "stopped", "interrupted"
    outcome: str  # in words: "answered in 4.2 s", "stopped after 3 s: stopped by ..."
    messages: list[Said]
    steps: list[Step]


@dataclass(frozen=True, slots=True)
class Paged(Generic[T]):
    """A page of a list shown newest first, with the cursors of the pages beside it: `older`
    and `newer` name the item just beyond this page (None: nothing more that way)."""

    items: list[T]
    older: str | None
    newer: str | None


@dataclass(frozen=True, slots=True)
class AuditEntry:
    seq: int | None
    at: float
    type: str
    run_id: str | None
    summary: str  # who did what, in words: "agent answered (312 chars)", "admin ... stopped"


@dataclass(frozen=True, slots=True)
class SessionDetail:
    row: SessionRow
    children: list[str]
    replica: str | None = None  # replicas: the one running it now (None: none, or SQLite)
    names: dict[str, str] = field(default_factory=dict)  # its parent's and children's, by id


@dataclass(frozen=True, slots=True)
class DeliveryRow:
    delivery_id: str
    conversation: str  # the key of the conversation it goes to
    where: str  # that conversation, by name
    kind: DeliveryKind
    status: DeliveryStatus
    attempts: int
    chunks_sent: int
    text: str  # the start of it
    last_error: str | None
    created_at: float


@dataclass(frozen=True, slots=True)
class Overview:
    connections: list[ConnectionRow]
    board: Board
    failed_deliveries: int
    pending_deliveries: int
    undelivered_notifications: int
    actions: list[AdminActionRecord]


@dataclass(frozen=True, slots=True)
class ApprovalRow:
    """A tool call waiting for an operator's approval, its input with secrets masked."""

    approval_id: str
    agent: str  # as the config names it
    where: str  # the session's conversation, by name
    session_id: str
    tool: str
    input: Any
    created_at: float
    deadline: float
