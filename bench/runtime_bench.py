"""Three runtime numbers: overhead per provider round, durable submit() throughput, and the
memory of idle sessions. Every run uses a fresh SQLite file in a temporary directory."""

from __future__ import annotations

import asyncio
import gc
import statistics
import tempfile
import time
import tracemalloc
from pathlib import Path

from runtime.agents import AgentSpec
from runtime.engine import Runtime
from runtime.messages import InboundMessage, Priority, QueueMode
from runtime.providers.base import (
    ProviderRequest,
    ProviderResponse,
    RetryNotice,
    StopReason,
    TextSink,
)
from runtime.results import RuntimeSettings
from runtime.transcript import TextBlock, ToolUseBlock


class ZeroLatencyProvider:
    """Answers at once: `rounds - 1` tool rounds (sleep 0), then a final text."""

    model = "zero"

    def __init__(self, rounds: int) -> None:
        self.rounds = rounds
        self.calls = 0
        self.done = 0

    async def close(self) -> None:
        pass

    async def complete(
        self, request: ProviderRequest, on_text: TextSink, on_retry: RetryNotice
    ) -> ProviderResponse:
        self.calls += 1
        if request.messages[-1].text():  # a new prompt: a new turn
            self.done = 0
        done = self.done
        self.done += 1
        if done + 1 >= self.rounds:
            on_text("done")
            return ProviderResponse([TextBlock(text="done")], StopReason.END_TURN, self.model)
        call = ToolUseBlock(id=f"toolu_{self.calls}", name="sleep", input={"seconds": 0})
        return ProviderResponse([call], StopReason.TOOL_USE, self.model)


class HeldProvider:
    """Never answers: keeps a turn running so submits only queue."""

    model = "held"

    async def close(self) -> None:
        pass

    async def complete(
        self, request: ProviderRequest, on_text: TextSink, on_retry: RetryNotice
    ) -> ProviderResponse:
        await asyncio.Event().wait()
        raise AssertionError


def prompt(text: str, priority: Priority = Priority.INTERJECT) -> InboundMessage:
    return InboundMessage(text, priority=priority)


async def _turn_seconds(rt: Runtime, provider: ZeroLatencyProvider, rounds: int) -> float:
    provider.rounds = rounds
    sid = await rt.create_session("a")
    start = time.perf_counter()
    await rt.submit(sid, prompt("go"))
    await rt.wait_idle()
    return time.perf_counter() - start


async def round_overhead(
    location: str | Path, rounds: int = 50, trials: int = 20
) -> dict[str, float]:
    """Marginal cost of one more provider round: (T(50 rounds) - T(1 round)) / 49, each turn
    on a fresh session, so the cost of loading a long history is not counted per round."""
    provider = ZeroLatencyProvider(rounds)
    # Its rounds repeat one call: the loop guard must not end the turn before the last.
    settings = RuntimeSettings(max_repeated_calls=rounds + 1)
    rt = await Runtime.open(location, provider=provider, agents=[AgentSpec("a")], settings=settings)
    long_turns = [await _turn_seconds(rt, provider, rounds) for _ in range(trials)]
    short_turns = [await _turn_seconds(rt, provider, 1) for _ in range(trials)]
    await rt.close()
    long, short = statistics.median(long_turns), statistics.median(short_turns)
    return {"per_round_ms": (long - short) / (rounds - 1) * 1000, "turn_ms": short * 1000}


async def busy_runtime(
    location: str | Path, sessions: int, queue_cap: int
) -> tuple[Runtime, list[str]]:
    """A runtime whose `sessions` each hold a running turn (a model that never answers), so
    every later submit only queues; and their ids."""
    settings = RuntimeSettings(default_queue_mode=QueueMode.FOLLOWUP, queue_cap=queue_cap)
    rt = await Runtime.open(
        location, provider=HeldProvider(), agents=[AgentSpec("a")], settings=settings
    )
    ids = [await rt.create_session("a") for _ in range(sessions)]
    for sid in ids:
        await rt.submit(sid, prompt("hold"))
    await asyncio.sleep(0.2)
    return rt, ids


async def submit_throughput(
    location: str | Path, sessions: int = 100, messages: int = 10_000
) -> float:
    rt, ids = await busy_runtime(location, sessions, messages)
    start = time.perf_counter()
    for i in range(messages):
        await rt.submit(ids[i % sessions], prompt(f"m{i}", Priority.NORMAL))
    elapsed = time.perf_counter() - start
    await rt.close()
    return messages / elapsed


async def idle_session_memory(tmp: Path, sessions: int = 10_000) -> dict[str, float]:
    rt = await Runtime.open(
        tmp / "idle.db", provider=ZeroLatencyProvider(1), agents=[AgentSpec("a")]
    )
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for i in range(sessions):
        await rt.create_session("a", session_id=f"slack:T0:C0:{i:08d}")
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    await rt.close()
    return {"bytes_per_session": (after - before) / sessions}


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp)
        rounds = await round_overhead(path / "rounds.db")
        throughput = await submit_throughput(path / "submit.db")
        memory = await idle_session_memory(path)
    rows = [
        (
            "runtime overhead per provider round (zero-latency provider; a tool round with its "
            "durable writes; marginal cost)",
            f"{rounds['per_round_ms']:.3f} ms",
            "< 1 ms",
        ),
        (
            "a whole one-round turn, submit to finished (zero-latency provider)",
            f"{rounds['turn_ms']:.3f} ms",
            "",
        ),
        (
            "durable submit() throughput (100 busy sessions, 10,000 messages)",
            f"{throughput:,.0f} messages/s",
            ">= 2,000/s",
        ),
        (
            "memory per idle session (10,000 sessions, Python heap)",
            f"{memory['bytes_per_session'] / 1024:.2f} KB",
            "< 50 KB",
        ),
    ]
    print("| benchmark | result | target |")
    print("|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    asyncio.run(main())
