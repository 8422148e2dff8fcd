"""What a turn takes (`TurnDeps`: the runtime's parts it works with) and what it gives back
(`TurnOutcome`), apart from the loop itself (`runtime/turn.py`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from config.prices import PriceTable
from runtime.approvals import Approvals
from runtime.clock import Clock
from runtime.context import Budget
from runtime.guards import TurnLimits
from runtime.memory import Memories
from runtime.providers.base import Provider, Usage
from runtime.records import RunStatus
from runtime.session import Session
from runtime.spend import SpendGate
from runtime.store.store import Store
from runtime.tool_round import ToolDeps
from runtime.tools.envelope import ToolResult
from runtime.tools.registry import ToolRegistry


@dataclass(frozen=True, slots=True)
class TurnDeps:
    store: Store
    provider: Provider
    tools: ToolRegistry
    clock: Clock
    max_rounds: int
    budget: Budget
    notify: Callable[[Session, str, str], Awaitable[ToolResult]]
    spawn: Callable[[Session, str, str], Awaitable[ToolResult]]
    approvals: Approvals
    wake_later: Callable[[Session, str, str, str], Awaitable[ToolResult]]
    prices: PriceTable
    gate: SpendGate
    limits: TurnLimits
    memories: Memories | None = None  # what agents keep across sessions (runtime/recall.py)

    def tool_deps(self) -> ToolDeps:
        return ToolDeps(
            self.store,
            self.tools,
            self.approvals,
            self.clock,
            self.notify,
            self.spawn,
            self.wake_later,
            self.memories,
        )


@dataclass(frozen=True, slots=True)
class TurnOutcome:
    status: RunStatus
    final_text: str
    error: str | None = None
    usage: Usage = field(default_factory=Usage)
    context_tokens: int | None = None  # the size of its last request, as counted
    rounds: int = 0  # model rounds it ran
