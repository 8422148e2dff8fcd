"""The runtime's settings and what its calls return."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from runtime.messages import DropPolicy, QueueMode
from runtime.records import AgentProfile


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
    status: str  # queued | waiting_for_safe_point | interrupting | dropped
    dropped_message_ids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class StopResult:
    status: Literal["stopped", "already_stopped"]
    run_id: str


@dataclass(frozen=True, slots=True)
class SessionStatus:
    session_id: str
    agent_id: str
    profile: AgentProfile
    mode: QueueMode
    state: Literal["idle", "running"]
    run_id: str | None
    step: str | None
    elapsed_s: float | None
    queued: int
    children: tuple[str, ...] = field(default_factory=tuple)
