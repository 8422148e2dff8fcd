"""The runtime's settings and what its calls return."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from config.prices import DEFAULT_PRICES, PriceTable
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
    context_window: int | None = None  # None: the model's, from its name
    compact_at: float = 0.7  # of the window (less max_tokens) a request may fill
    keep_recent: float = 0.25  # of it, kept verbatim when compacting
    prices: PriceTable = field(default_factory=lambda: PriceTable(DEFAULT_PRICES))
    max_turn_tokens: int = 5_000_000  # runaway guards (runtime/guards.py)
    max_repeated_calls: int = 10


@dataclass(frozen=True, slots=True)
class SubmitResult:
    message_id: str
    status: SubmitStatus
    dropped_message_ids: tuple[str, ...] = ()


class StopStatus(StrEnum):
    STOPPED = "stopped"
    ALREADY_STOPPED = "already_stopped"


class CompactStatus(StrEnum):
    STARTED = "started"  # the session is idle: compacting now
    AT_NEXT_STEP = "at_next_step"  # a turn runs: before its next model request


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
    context_tokens: int | None = None  # the last request's size, as the provider counted it
    context_window: int = 0
