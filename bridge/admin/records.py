"""What the admin console shows of a workspace, as typed rows (read by `view.py`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bridge.connections import Connection
from bridge.store import AdminActionRecord
from bridge.types import DeliveryKind, DeliveryStatus
from runtime import AgentProfile, QueueMode, SessionState


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
    conversation: str | None  # the conversation it serves (a child: none of its own)
    state: SessionState
    mode: QueueMode
    queued: int
    run_id: str | None
    step: str | None
    elapsed_s: float | None

    def to_json(self) -> dict[str, Any]:
        return {
            "session": self.session_id,
            "agent": self.agent_id,
            "state": self.state.value,
            "mode": self.mode.value,
            "queued": self.queued,
            "run": self.run_id,
            "step": self.step,
            "elapsed_s": self.elapsed_s,
        }


@dataclass(frozen=True, slots=True)
class TranscriptLine:
    role: str  # "user", "assistant"
    kind: str  # "text", "tool_use", "tool_result", "attachment"
    text: str


@dataclass(frozen=True, slots=True)
class AuditEntry:
    seq: int | None
    at: float
    type: str
    run_id: str | None
    summary: str  # one line: what happened, with its boundary, route, admin ...


@dataclass(frozen=True, slots=True)
class SessionDetail:
    row: SessionRow
    transcript: list[TranscriptLine]
    audit: list[AuditEntry]
    children: list[str]


@dataclass(frozen=True, slots=True)
class DeliveryRow:
    delivery_id: str
    conversation: str  # the conversation it goes to (its key)
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
    sessions: list[SessionRow]
    failed_deliveries: int
    pending_deliveries: int
    undelivered_notifications: int
    actions: list[AdminActionRecord]


@dataclass(frozen=True, slots=True)
class ApprovalRow:
    """A tool call waiting for an operator's approval, its input with secrets masked."""

    approval_id: str
    agent_id: str
    tool: str
    input: Any
    created_at: float
    deadline: float
