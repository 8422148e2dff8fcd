"""Issue 45: the CPU one turn costs the process that runs it, and whether it stays flat as a
session grows. One session, `--turns` turns in a row, each a two-round turn (a tool call, then
a text answer) from a model that answers at once: the runtime's own provider interface
(`instant`) and `AnthropicProvider` against the loopback fake Messages API served by a child
process (`anthropic`: the request is lowered, encoded and sent as for the real API, and the
fake's CPU is not counted; its first token comes `--latency-ms` after each request, at every
turn). No compaction: the history only grows (about 100 tokens a turn).

CPU is the process's (`time.process_time`), per turn: the median of turns 1-10 and of the
last ten. `--profile` adds where one turn's CPU goes (cProfile over turns
`--turns`-10..`--turns`, by part).

`.venv/bin/python -m bench.turn_cpu_bench [--turns 500] [--latency-ms 60] [--profile N]`"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web
from aiohttp.typedefs import Handler

from bench.replicas.profile import Breakdown, Spy
from runtime.agents import AgentSpec
from runtime.engine import Runtime
from runtime.messages import InboundMessage
from runtime.providers.anthropic import AnthropicProvider
from runtime.providers.base import (
    Provider,
    ProviderRequest,
    ProviderResponse,
    RetryNotice,
    StopReason,
    TextSink,
    Usage,
)
from runtime.results import RuntimeSettings
from runtime.transcript import TextBlock, ToolResultBlock, ToolUseBlock

WORDS = "The operator explains what they need in a few sentences of ordinary text. " * 3
ANSWER = "Done: here is what I found. " * 4
SPAN = 10  # turns at each end
# The fake Messages API's time to a first token, the same at every turn as a model's would
# be. The fake checks each request whole, in Python: about 1 ms at turn 1 and 40 at turn 500.
# A thread that waits is charged CPU on the benchmark's machine (a `time.sleep(2)` 1.7 ms, an
# idle event loop 4 ms a second), so answering as soon as checked would charge the turn for
# the fake's growing check. The wall columns show whether the check outgrew this.
LATENCY_MS = 60.0


class InstantProvider:
    """Answers at once, counting tokens as characters / 4: a tool call, then a text."""

    model = "instant"

    def __init__(self) -> None:
        self.calls = 0

    async def close(self) -> None:
        pass

    async def complete(
        self, request: ProviderRequest, on_text: TextSink, on_retry: RetryNotice
    ) -> ProviderResponse:
        self.calls += 1
        usage = Usage(input_tokens=1_000, output_tokens=20)  # not counted: a model's own work
        last = request.messages[-1].blocks[-1]
        if request.tools and not isinstance(last, ToolResultBlock):
            call = ToolUseBlock(id=f"toolu_{self.calls}", name="sleep", input={"seconds": 0})
            return ProviderResponse([call], StopReason.TOOL_USE, self.model, usage)
        on_text(ANSWER)
        return ProviderResponse([TextBlock(text=ANSWER)], StopReason.END_TURN, self.model, usage)


async def serve_fake(latency_s: float) -> None:
    """The child process: the fake Messages API, answering as `InstantProvider` does, each
    answer's first block `latency_s` after its request arrived (as a model's first token;
    sooner is not possible when checking the request takes the fake longer)."""
    from bench.loopback import serve
    from tests.fakes.anthropic_api import FakeAnthropic, text, tools

    loop = asyncio.get_running_loop()
    arrived = [0.0]

    @web.middleware
    async def clock_in(request: web.Request, handler: Handler) -> web.StreamResponse:
        arrived[0] = loop.time()  # one request at a time: the session's rounds are in a row
        return await handler(request)

    def answer(body: dict[str, Any]) -> Any:
        first_token = asyncio.Event()
        loop.call_at(arrived[0] + latency_s, first_token.set)
        last = body["messages"][-1]["content"][-1]
        if body.get("tools") and last.get("type") != "tool_result":
            return tools(("sleep", {"seconds": 0}), begin=first_token)
        return text(ANSWER, begin=first_token)

    fake = FakeAnthropic(context_window=10_000_000)
    fake.responder = answer
    fake.requests = _Discard()
    app = fake.app()
    app.middlewares.append(clock_in)
    _runner, url = await serve(app)
    print(url, flush=True)
    await asyncio.Event().wait()


class _Discard(list[Any]):
    """The fake keeps every request it was sent; over hundreds of turns that is not wanted."""

    def append(self, item: Any) -> None:
        pass


@dataclass
class Costs:
    """CPU seconds of each turn of one session: the process's and its main thread's."""

    process: list[float] = field(default_factory=list)
    main: list[float] = field(default_factory=list)
    wall: list[float] = field(default_factory=list)
    parts: Breakdown | None = None  # where the CPU of the turns after them went
    profiled_s: float = 0.0  # the CPU of those turns

    def ms(self, values: list[float], last: bool) -> float:
        return statistics.median(values[-SPAN:] if last else values[:SPAN]) * 1000


async def session_costs(
    tmp: Path, provider: Provider, turns: int, profiled: int, raw: Path
) -> Costs:
    """`turns` turns of one session, then `profiled` more sampled by py-spy into `raw`."""
    rt = await Runtime.open(
        tmp / f"turns-{provider.model}.db",
        provider=provider,
        agents=[AgentSpec("a", tools=("sleep",), system_prompt="You are a helpful agent.")],
        settings=RuntimeSettings(context_window=10_000_000, max_tokens=500),
    )
    sid = await rt.create_session("a")
    costs = Costs()
    try:
        for n in range(turns):
            start, main, wall = time.process_time(), time.thread_time(), time.perf_counter()
            await rt.submit(sid, InboundMessage(f"Turn {n}. {WORDS}"))
            await rt.wait_idle(sid)
            costs.process.append(time.process_time() - start)
            costs.main.append(time.thread_time() - main)
            costs.wall.append(time.perf_counter() - wall)
        if profiled:
            spy = await Spy.start(os.getpid(), raw)
            start = time.process_time()
            for n in range(turns, turns + profiled):
                await rt.submit(sid, InboundMessage(f"Turn {n}. {WORDS}"))
                await rt.wait_idle(sid)
            costs.profiled_s = time.process_time() - start
            costs.parts = await spy.stop()
    finally:
        await rt.close()
    return costs


def fake_process(latency_s: float) -> tuple[subprocess.Popen[str], str]:
    child = subprocess.Popen(
        [sys.executable, "-m", "bench.turn_cpu_bench", "--serve-fake", str(latency_s)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    return child, child.stdout.readline().strip()


async def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.turn_cpu_bench")
    parser.add_argument("--turns", type=int, default=500)
    parser.add_argument(
        "--profile", type=int, default=0, metavar="N", help="py-spy N more turns of each, by part"
    )
    parser.add_argument(
        "--latency-ms",
        type=float,
        default=LATENCY_MS,
        help="the fake model's time to its first token, the same every round",
    )
    parser.add_argument("--serve-fake", type=float, metavar="LATENCY_S", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_fake is not None:
        await serve_fake(args.serve_fake)
        return
    child, url = fake_process(args.latency_ms / 1000)
    rows: list[tuple[str, Costs]] = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for name, provider in (
                ("instant (the runtime's provider interface)", InstantProvider()),
                (
                    "AnthropicProvider, loopback fake Messages API",
                    AnthropicProvider("claude-test-model", api_key="k", base_url=url),
                ),
            ):
                raw = Path(tmp) / f"{provider.model}.raw"
                rows.append(
                    (name, await session_costs(Path(tmp), provider, args.turns, args.profile, raw))
                )
    finally:
        child.terminate()
        child.wait()
    last = f"turns {args.turns - SPAN + 1}-{args.turns}"
    print(
        f"| one session, model | CPU per turn, turns 1-{SPAN} | {last} | ratio"
        f" | main thread, turns 1-{SPAN} | {last} | wall, turns 1-{SPAN} | {last} |"
        "\n|---|--:|--:|--:|--:|--:|--:|--:|"
    )
    for name, c in rows:
        first, final = c.ms(c.process, False), c.ms(c.process, True)
        print(
            f"| {name} | {first:.2f} ms | {final:.2f} ms | {final / first:.2f}x"
            f" | {c.ms(c.main, False):.2f} ms | {c.ms(c.main, True):.2f} ms"
            f" | {c.ms(c.wall, False):.1f} ms | {c.ms(c.wall, True):.1f} ms |"
        )
    for name, c in rows:
        if c.parts is not None:
            print(f"\n{name}: turns {args.turns + 1}-{args.turns + args.profile}, by part")
            print(c.parts.table(c.profiled_s * 1000 / args.profile, c.profiled_s))


if __name__ == "__main__":
    asyncio.run(main())
