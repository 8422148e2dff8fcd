"""One session for 1,000 turns: does a turn cost the same at turn 1,000 as at turn 10?

The model answers at once (a two-round turn: a tool call, then a text) and reports its usage
as the real API would (a token per four characters); the context window is small, so the
session compacts every few dozen turns, and the cost of those compactions is in the figures.
Run: `.venv/bin/python -m bench.long_session_bench`."""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from runtime.agents import AgentSpec
from runtime.engine import Runtime
from runtime.messages import InboundMessage
from runtime.providers.base import (
    ProviderRequest,
    ProviderResponse,
    RetryNotice,
    StopReason,
    TextSink,
    Usage,
    request_chars,
)
from runtime.results import RuntimeSettings
from runtime.transcript import TextBlock, ToolResultBlock, ToolUseBlock

TURNS = 1_000
WINDOW = 8_000  # tokens: compaction every few dozen turns
WORDS = "The operator explains what they need in a few sentences of ordinary text. " * 3


class CountingProvider:
    """Answers at once, counting tokens as characters / 4."""

    model = "counting"

    def __init__(self) -> None:
        self.calls = 0

    async def close(self) -> None:
        pass

    async def complete(
        self, request: ProviderRequest, on_text: TextSink, on_retry: RetryNotice
    ) -> ProviderResponse:
        self.calls += 1
        usage = Usage(input_tokens=request_chars(request) // 4, output_tokens=20)
        last = request.messages[-1].blocks[-1]
        if request.tools and not isinstance(last, ToolResultBlock):
            call = ToolUseBlock(id=f"toolu_{self.calls}", name="sleep", input={"seconds": 0})
            return ProviderResponse([call], StopReason.TOOL_USE, self.model, usage)
        answer = TextBlock(text="Done: here is what I found. " * 4)
        return ProviderResponse([answer], StopReason.END_TURN, self.model, usage)


async def turn_costs(tmp: Path, window: int | None) -> list[float]:
    settings = RuntimeSettings(context_window=window, max_tokens=500)
    rt = await Runtime.open(
        tmp / f"long-{window}.db",
        provider=CountingProvider(),
        agents=[AgentSpec("a", tools=("sleep",))],
        settings=settings,
    )
    sid = await rt.create_session("a")
    costs = []
    for n in range(TURNS):
        start = time.perf_counter()
        await rt.submit(sid, InboundMessage(f"Turn {n}. {WORDS}"))
        await rt.wait_idle(sid)
        costs.append(time.perf_counter() - start)
    await rt.close()
    return costs


SPAN = 50  # turns: a window holds a compaction or two once the session has them


def _figures(costs: list[float], first: int) -> tuple[float, float]:
    """Median and mean of the turns from `first` on, in ms (the mean carries compactions)."""
    span = costs[first : first + SPAN]
    return statistics.median(span) * 1000, statistics.mean(span) * 1000


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        compacting = await turn_costs(Path(tmp), WINDOW)
        unbounded = await turn_costs(Path(tmp), 10_000_000)
    print(
        f"| one session, {TURNS:,} turns | turns 10-59 median / mean | turns 950-999 median / mean"
        " | ratio of medians | ratio of means |\n|---|---|---|---|---|"
    )
    rows = (("compacting (8,000-token window)", compacting), ("never compacting", unbounded))
    for name, costs in rows:
        (m1, a1), (m2, a2) = _figures(costs, 10), _figures(costs, TURNS - SPAN)
        print(
            f"| {name} | {m1:.2f} / {a1:.2f} ms | {m2:.2f} / {a2:.2f} ms"
            f" | {m2 / m1:.2f}x | {a2 / a1:.2f}x |"
        )


if __name__ == "__main__":
    asyncio.run(main())
