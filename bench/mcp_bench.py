"""An MCP tool round against a command tool round, and against the bare SDK client calling the
same server (issue 15), side by side in one run.

The runtime's marginal cost of a round that calls a tool, `(T(41-round turn) - T(1-round
turn)) / 40`, medians of 7 turns each, with a model that answers at once:
- a command tool: `/bin/cat`, a process started per call, echoing the JSON input;
- an MCP tool: `add` of the test server (`tests/fakes/mcp_server.py`) over stdio;
and the bare SDK: `ClientSession.call_tool("add")` on its own connection to the same server,
the median of 200 calls. Run: `.venv/bin/python -m bench.mcp_bench`.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.runtime_bench import prompt
from runtime.agents import AgentSpec
from runtime.engine import Runtime
from runtime.providers.base import (
    ProviderRequest,
    ProviderResponse,
    RetryNotice,
    StopReason,
    TextSink,
)
from runtime.results import RuntimeSettings
from runtime.tools.command import CommandToolSpec
from runtime.tools.mcp import McpServerSpec, McpTools
from runtime.transcript import TextBlock, ToolUseBlock

SERVER = Path(__file__).resolve().parents[1] / "tests" / "fakes" / "mcp_server.py"
ROUNDS = 41


class ToolCaller:
    """Answers at once: `rounds - 1` calls of one tool, then a final text."""

    model = "zero"

    def __init__(self, tool: str, tool_input: dict[str, Any]) -> None:
        self.tool, self.input = tool, tool_input
        self.rounds = 1
        self.done = 0
        self.calls = 0

    async def close(self) -> None:
        pass

    async def complete(
        self, request: ProviderRequest, on_text: TextSink, on_retry: RetryNotice
    ) -> ProviderResponse:
        self.calls += 1
        if request.messages[-1].text():
            self.done = 0
        self.done += 1
        if self.done >= self.rounds:
            return ProviderResponse([TextBlock(text="done")], StopReason.END_TURN, self.model)
        call = ToolUseBlock(id=f"toolu_{self.calls}", name=self.tool, input=self.input)
        return ProviderResponse([call], StopReason.TOOL_USE, self.model)


async def per_round_ms(
    where: Path, tool: str, tool_input: dict[str, Any], agent_tools: tuple[str, ...], **kw: Any
) -> float:
    provider = ToolCaller(tool, tool_input)
    rt = await Runtime.open(
        where,
        provider=provider,
        agents=[AgentSpec("a", "", agent_tools)],
        settings=RuntimeSettings(max_rounds=ROUNDS + 5),
        **kw,
    )
    try:

        async def turn(rounds: int) -> float:
            provider.rounds = rounds
            sid = await rt.create_session("a")
            start = time.perf_counter()
            await rt.submit(sid, prompt("go"))
            await rt.wait_idle()
            return time.perf_counter() - start

        await turn(3)  # warm up
        long = statistics.median([await turn(ROUNDS) for _ in range(7)])
        short = statistics.median([await turn(1) for _ in range(7)])
        return (long - short) / (ROUNDS - 1) * 1000
    finally:
        await rt.close()


async def bare_sdk_ms(calls: int = 200) -> float:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    with tempfile.TemporaryDirectory() as notes:
        params = StdioServerParameters(command=sys.executable, args=[str(SERVER), "--notes", notes])
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            await session.list_tools()
            times = []
            for _ in range(calls):
                start = time.perf_counter()
                await session.call_tool("add", {"a": 1, "b": 2})
                times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


async def main() -> None:
    with tempfile.TemporaryDirectory(prefix="sb-mcp-bench-") as tmp:
        root = Path(tmp)
        cat = CommandToolSpec("echo_input", "Echo the input.", ("/bin/cat",), 30)
        command = await per_round_ms(
            root / "command.db", "echo_input", {"a": 1}, ("echo_input",), command_tools=[cat]
        )
        spec = McpServerSpec("demo", sys.executable, (str(SERVER), "--notes", str(root)))
        mcp = await per_round_ms(
            root / "mcp.db",
            "demo__add",
            {"a": 1, "b": 2},
            ("demo.add",),
            mcp_tools=McpTools([spec]),
        )
        builtin = await per_round_ms(root / "sleep.db", "sleep", {"seconds": 0}, ("sleep",))
        bare = await bare_sdk_ms()
    print("| a tool round | ms | against the MCP round |")
    print("|---|---|---|")
    print(
        f"| command tool (`/bin/cat`, a process per call) | {command:.2f} | {command / mcp:.2f}x |"
    )
    print(f"| MCP tool over stdio, through the runtime | {mcp:.2f} | 1.00x |")
    print(
        f"| built-in tool (`sleep 0`: the runtime's own round) | {builtin:.2f} | "
        f"{builtin / mcp:.2f}x |"
    )
    print(f"| the bare SDK client calling the same tool | {bare:.2f} | {bare / mcp:.2f}x |")
    print(f"\nSwitchboard's cost over the bare SDK call, per round: {mcp - bare:.2f} ms")


if __name__ == "__main__":
    asyncio.run(main())
