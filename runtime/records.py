"""Durable records other than queue entries: sessions, runs, tool calls, notifications."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from runtime.messages import QueueMode


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


class ToolStatus(StrEnum):
    SUCCESS = "success"
    ERROR = "error"
    CANCELLED = "cancelled"


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
