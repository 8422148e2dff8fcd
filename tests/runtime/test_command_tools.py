"""Admin command tools: JSON on stdin, stdout as result, errors, timeouts, schema checks."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from runtime.tools.base import ToolContext, Woken
from runtime.tools.command import CommandToolSpec
from runtime.tools.envelope import ToolResult, ToolStatus
from runtime.tools.registry import ToolRegistry
from tests.runtime.helpers import process_alive


async def _never(_: str) -> ToolResult:
    raise AssertionError("not used")


async def _no_wait(_: float) -> Woken:
    return Woken.TIMED_OUT


async def _no_wakeup(_: str, __: str) -> ToolResult:
    raise AssertionError("not used")


CTX = ToolContext("s", "r", "t", _never, _never, _no_wait, _no_wakeup)


def tool(command: str, **kw: object) -> CommandToolSpec:
    return CommandToolSpec(name="t", description="d", command=("bash", "-c", command), **kw)  # type: ignore[arg-type]


async def run(spec: CommandToolSpec, tool_input: dict[str, object]) -> ToolResult:
    return await ToolRegistry([spec]).run("t", tool_input, CTX, ["t"])


async def test_input_on_stdin_and_json_stdout() -> None:
    result = await run(
        tool(
            "python3 -c 'import json,sys; d=json.load(sys.stdin); "
            'print(json.dumps({"twice": d["n"] * 2}))\''
        ),
        {"n": 21},
    )
    assert result.status is ToolStatus.SUCCESS and result.result == {"twice": 42}


async def test_non_zero_exit_is_an_error_with_stderr() -> None:
    result = await run(tool("echo broken >&2; exit 3"), {})
    assert result.status is ToolStatus.ERROR
    assert result.error and result.error.kind == "exit_status" and "broken" in result.error.message


async def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    result = await run(tool(f"sleep 30 & echo $! > {pidfile}; wait", timeout_s=0.3), {})
    assert result.error and result.error.kind == "timeout" and result.error.retryable
    pid = int(pidfile.read_text())
    for _ in range(50):
        if not process_alive(pid):
            break
        await asyncio.sleep(0.02)
    assert not process_alive(pid), "the grandchild was killed with its group"


async def test_input_is_checked_against_the_schema() -> None:
    spec = tool(
        "cat",
        input_schema={
            "type": "object",
            "properties": {"n": {"type": "integer"}},
            "required": ["n"],
        },
    )
    result = await run(spec, {"n": "seven"})
    assert result.error and result.error.kind == "invalid_input"
    assert "'seven' is not of type 'integer'" in result.error.message


async def test_a_tool_not_offered_is_refused() -> None:
    result = await ToolRegistry([tool("true")]).run("t", {}, CTX, ["sleep"])
    assert result.error and result.error.kind == "unknown_tool"


def test_a_name_clash_with_a_builtin_is_an_error() -> None:
    with pytest.raises(ValueError, match="defined twice"):
        ToolRegistry([CommandToolSpec(name="sleep", description="", command=("true",))])
