"""Durable records other than queue entries: sessions, runs, tool calls, notifications,
approvals."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from runtime.messages import QueueMode
from runtime.tools.envelope import ToolResult, ToolStatus


class AgentProfile(StrEnum):
    DEFAULT = "default"
    PUBLIC_NAMED = "public_named"
    PRIVATE_CHILD = "private_child"


class RunStatus(StrEnum):
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    STOPPED = "stopped"
    INTERRUPTED = "interrupted"  # the process ended while it ran; its messages replay


class OperatorBoundary(StrEnum):
    PRIMARY_OPERATOR = "primary_operator"
    PARENT_SUPERVISOR = "parent_supervisor"


@dataclass(slots=True)
class SessionRecord:
    id: str
    agent_id: str
    profile: AgentProfile
    created_at: float
    parent_session_id: str | None = None
    queue_mode: QueueMode | None = None  # None: the runtime's default
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class RunRecord:
    id: str
    session_id: str
    status: RunStatus
    model: str
    started_at: float
    finished_at: float | None = None
    final_text: str | None = None
    error: str | None = None
    payer: str | None = None  # who its model calls are charged to (runtime/spend.py)


@dataclass(slots=True)
class NotificationRecord:
    notification_id: str
    agent_id: str
    requested_by_agent_id: str
    session_id: str
    requested_by_session_id: str
    run_id: str | None
    target_operator_boundary: OperatorBoundary
    message: str
    summary: str
    created_at: float


class ApprovalStatus(StrEnum):
    """Where an operator's approval of one tool call stands."""

    PENDING = "pending"
    APPROVED = "approved"
    DENIED = "denied"
    TIMED_OUT = "timed_out"
    CANCELLED = "cancelled"  # the turn was stopped while it waited


@dataclass(frozen=True, slots=True)
class ApprovalRecord:
    """A tool call that waits for (or got) an operator's yes or no before it runs."""

    id: str
    tool_use_id: str
    session_id: str  # the session whose turn made the call (a child's own)
    run_id: str
    agent_id: str
    tool: str  # as people read it: `server.tool` for an MCP tool
    input: dict[str, Any]
    status: ApprovalStatus
    created_at: float
    deadline: float  # wall time: no answer by then is a no
    decided_by: str | None = None
    decided_at: float | None = None


@dataclass(slots=True)
class ToolCallRecord:
    id: str
    session_id: str
    run_id: str
    name: str
    input: dict[str, Any]
    started_at: float
    status: ToolStatus | None = None  # None: it has not finished (or never will)
    result: ToolResult | None = None
    finished_at: float | None = None


@dataclass(frozen=True, slots=True)
class Lease:
    """Who runs a piece of shared work (a session's turns, `session:<id>`; a bot's polling),
    until when, and the fencing number of that holding: it grows each time the lease changes
    hands, and a write fenced by an older one is refused."""

    name: str
    holder: str
    fence: int
    expires_at: float


class WakeupStatus(StrEnum):
    PENDING = "pending"
    FIRED = "fired"
    CANCELLED = "cancelled"


@dataclass(frozen=True, slots=True)
class WakeupRecord:
    """A turn a session asked for at a later time (`schedule_wakeup`): durable, so a restart
    or a failover neither loses it nor runs it twice."""

    id: str
    session_id: str
    run_id: str | None  # the turn that asked for it
    due_at: float  # wall time
    note: str  # what the agent means to do then; its next turn's prompt
    status: WakeupStatus
    created_at: float
    reply_route: dict[str, Any] | None = None  # where the asking turn's answer went
    message_id: str | None = None  # the message it became when it fired
