"""The runtime's settings and what its calls return."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from runtime.messages import DropPolicy, QueueMode
from runtime.records import AgentProfile
from runtime.scheduler import SubmitStatus


@dataclass(frozen=True, slots=True)
class RuntimeSettings:
    default_queue_mode: QueueMode = QueueMode.STEER
    queue_cap: int = 100
    drop_policy: DropPolicy = DropPolicy.OLDEST
    collect_window_s: float = 2.0
    max_rounds: int = 50
    max_tokens: int = 4096


@dataclass(frozen=True, slots=True)
class SubmitResult:
    message_id: str
    status: SubmitStatus
    dropped_message_ids: tuple[str, ...] = ()


class StopStatus(StrEnum):
    STOPPED = "stopped"
    ALREADY_STOPPED = "already_stopped"


class SessionState(StrEnum):
    IDLE = "idle"
    RUNNING = "running"


@dataclass(frozen=True, slots=True)
class StopResult:
    status: StopStatus
    run_id: str


@dataclass(frozen=True, slots=True)
class SessionStatus:
    session_id: str
    agent_id: str
    profile: AgentProfile
    mode: QueueMode
    state: SessionState
    run_id: str | None
    step: str | None
    elapsed_s: float | None
    queued: int
    children: tuple[str, ...] = field(default_factory=tuple)
