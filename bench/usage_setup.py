"""What bench/usage_bench.py measures with: who its rounds are charged to and what they use,
earlier usage rows, a gate that reads them as the bridge's budgets do, and a clock that
reads both wall and CPU time."""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from bridge.spend.budgets import Standing, applies, usage_filter
from bridge.spend.periods import period_bounds
from config.budgets import BudgetConfig
from runtime.engine import Runtime
from runtime.providers.base import Usage
from runtime.spend import CallPurpose, Charge, PlannedCall, SpendHold, UsageRecord, cost_of
from runtime.store.usage import record

WORKSPACE = "ws"
AGENT = f"{WORKSPACE}/a"
OPERATOR = "U1"
UTC = ZoneInfo("UTC")
MODEL = "claude-sonnet-4-5"
ROUND_USAGE = Usage(input_tokens=1_200, output_tokens=80, cache_read_tokens=3_000)
FAR = 1e12  # a limit no run reaches: the gate reads, and never holds
ONE_BUDGET = [BudgetConfig(period="day", limit_usd=FAR, warn_at=None)]
THREE_BUDGETS = [
    *ONE_BUDGET,
    BudgetConfig(scope="agent", id="a", period="day", limit_tokens=int(FAR), warn_at=None),
    BudgetConfig(scope="operator", id=OPERATOR, period="month", limit_usd=FAR, warn_at=None),
]


@dataclass(frozen=True, slots=True)
class Took:
    """Seconds (or milliseconds) of wall clock and of this process's CPU, all its threads (the
    SQLite writer's included): CPU time moves far less with the machine's other load."""

    wall: float
    cpu: float

    @staticmethod
    def now() -> Took:
        return Took(time.perf_counter(), time.process_time())

    def __sub__(self, other: Took) -> Took:
        return Took(self.wall - other.wall, self.cpu - other.cpu)

    def __truediv__(self, by: float) -> Took:
        return Took(self.wall / by, self.cpu / by)

    @staticmethod
    def median(took: list[Took]) -> Took:
        return Took(statistics.median(t.wall for t in took), statistics.median(t.cpu for t in took))


class SummingGate:
    """The bridge's `BudgetGate` as the store sees it: per budget the call counts against, its
    period's sum (the one query `bridge.spend.budgets.standing` makes) with the call's estimate
    added. No warnings; the limits are out of reach."""

    def __init__(self, rt: Runtime, budgets: Sequence[BudgetConfig]) -> None:
        self._rt = rt
        self._budgets = budgets

    async def before_call(self, call: PlannedCall) -> SpendHold | None:
        cost, _ = cost_of(self._rt.turn_deps.prices, call.model, call.estimate)
        tokens = call.estimate.request_tokens + call.estimate.output_tokens
        now = self._rt.clock.wall()
        for budget in self._budgets:
            if not applies(budget, WORKSPACE, call.charge):
                continue
            start, end = period_bounds(budget.period, UTC, now)
            spent = await self._rt.store.usage.total(usage_filter(budget, WORKSPACE, start, end))
            if Standing(budget, spent, start, end).would_pass(cost, tokens):
                raise AssertionError(f"budget {budget.key} reached; the bench sets them far")
        return None


async def seed(rt: Runtime, rows: int, batch: int = 5_000) -> None:
    """`rows` earlier calls of the agent, by the operator, spread over today until now."""
    now = rt.clock.wall()
    start, _ = period_bounds("day", UTC, now)
    charge = Charge("seeded", AGENT, OPERATOR)
    for first in range(0, rows, batch):
        async with rt.store.write() as w:
            for i in range(first, min(rows, first + batch)):
                at = start + (now - start) * i / rows
                used = UsageRecord(at, charge, "m", CallPurpose.ROUND, ROUND_USAGE, 0.01, True)
                record(w, used)


async def reads(rt: Runtime, budgets: Sequence[BudgetConfig], times: int = 15) -> list[Took]:
    """The gate's reads alone, for one call (ms)."""
    gate = SummingGate(rt, budgets)
    call = PlannedCall(Charge("s", AGENT, OPERATOR), MODEL, ROUND_USAGE, False)
    spent = []
    for _ in range(times):
        start = Took.now()
        await gate.before_call(call)
        spent.append((Took.now() - start) / 0.001)
    return spent
