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

from runtime import AgentSpec, InboundMessage, Priority, QueueMode, Runtime, RuntimeSettings
from runtime.providers.base import (
    ProviderRequest,
    ProviderResponse,
    RetryNotice,
    StopReason,
    TextSink,
)
from runtime.transcript import TextBlock, ToolUseBlock


class ZeroLatencyProvider:
    """Answers at once: `rounds - 1` tool rounds (sleep 0), then a final text."""

    model = "zero"

    def __init__(self, rounds: int) -> None:
        self.rounds = rounds
        self.calls = 0

    async def complete(
        self, request: ProviderRequest, on_text: TextSink, on_retry: RetryNotice
    ) -> ProviderResponse:
        self.calls += 1
        prompt_at = max(i for i, m in enumerate(request.messages) if m.role == "user" and m.text())
        done = sum(1 for m in request.messages[prompt_at:] if m.role == "assistant")
        if done + 1 >= self.rounds:
            on_text("done")
            return ProviderResponse([TextBlock(text="done")], StopReason.END_TURN, self.model)
        call = ToolUseBlock(id=f"toolu_{self.calls}", name="sleep", input={"seconds": 0})
        return ProviderResponse([call], StopReason.TOOL_USE, self.model)


class HeldProvider:
    """Never answers: keeps a turn running so submits only queue."""

    model = "held"

    async def complete(
        self, request: ProviderRequest, on_text: TextSink, on_retry: RetryNotice
    ) -> ProviderResponse:
        await asyncio.Event().wait()
        raise AssertionError


def prompt(text: str, priority: Priority = Priority.INTERJECT) -> InboundMessage:
    return InboundMessage(text, priority=priority)


async def round_overhead(tmp: Path, rounds: int = 50, turns: int = 20) -> dict[str, float]:
    provider = ZeroLatencyProvider(rounds)
    rt = await Runtime.open(tmp / "rounds.db", provider=provider, agents=[AgentSpec("a")])
    sid = await rt.create_session("a")
    per_round: list[float] = []
    for i in range(turns):
        start = time.perf_counter()
        await rt.submit(sid, prompt(f"turn {i}"))
        await rt.wait_idle()
        per_round.append((time.perf_counter() - start) / rounds)
    assert provider.calls == rounds * turns, provider.calls
    await rt.close()
    return {
        "median_ms": statistics.median(per_round) * 1000,
        "p90_ms": sorted(per_round)[int(0.9 * len(per_round))] * 1000,
    }


async def submit_throughput(tmp: Path, sessions: int = 100, messages: int = 10_000) -> float:
    settings = RuntimeSettings(default_queue_mode=QueueMode.FOLLOWUP, queue_cap=messages)
    rt = await Runtime.open(
        tmp / "submit.db", provider=HeldProvider(), agents=[AgentSpec("a")], settings=settings
    )
    ids = [await rt.create_session("a") for _ in range(sessions)]
    for sid in ids:  # one running turn each, so every later submit only queues
        await rt.submit(sid, prompt("hold"))
    await asyncio.sleep(0.2)
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
        rounds = await round_overhead(path)
        throughput = await submit_throughput(path)
        memory = await idle_session_memory(path)
    print("| benchmark | result | target |")
    print("|---|---|---|")
    print(
        f"| runtime overhead per provider round (zero-latency provider, tool round with "
        f"durable writes) | median {rounds['median_ms']:.3f} ms, p90 {rounds['p90_ms']:.3f} ms"
        " | < 1 ms |"
    )
    print(f"| durable submit() throughput | {throughput:,.0f} messages/s | >= 2,000/s |")
    print(
        f"| memory per idle session (10,000 sessions, Python heap) | "
        f"{memory['bytes_per_session'] / 1024:.2f} KB | < 50 KB |"
    )


if __name__ == "__main__":
    asyncio.run(main())
