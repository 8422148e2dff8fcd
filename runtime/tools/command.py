"""Admin-defined command tools: argv, JSON input on stdin, stdout as the result, and an
environment of their own (`environment.py`), never this process's.

The process runs in its own process group; a timeout or a cancel kills the whole group,
so a shell pipeline never outlives the tool call that started it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from runtime.tools.base import Approval, ToolContext, ToolSpec
from runtime.tools.envelope import ToolResult
from runtime.tools.environment import tool_environment

log = logging.getLogger(__name__)

OUTPUT_LIMIT = 64_000


@dataclass(frozen=True, slots=True)
class CommandToolSpec:
    name: str
    description: str
    command: tuple[str, ...]
    timeout_s: float = 600.0
    input_schema: dict[str, Any] = field(default_factory=lambda: {"type": "object"})
    approval: Approval | None = None  # None: runs without asking
    env: Mapping[str, str] = field(default_factory=dict)  # added to PATH, HOME, LANG, TZ


class CommandTool:
    def __init__(self, definition: CommandToolSpec) -> None:
        self.definition = definition
        self.spec = ToolSpec(definition.name, definition.description, definition.input_schema)

    async def run(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        d = self.definition
        try:
            proc = await asyncio.create_subprocess_exec(
                *d.command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=tool_environment(d.env),
                start_new_session=True,
            )
        except OSError as exc:
            return ToolResult.failure("spawn_failed", f"could not start {d.command[0]!r}: {exc}")
        log.info("command tool started", extra={"tool": d.name, "pid": proc.pid})
        try:
            stdout, stderr = await asyncio.wait_for(
                proc.communicate(json.dumps(tool_input).encode()), d.timeout_s
            )
        except TimeoutError:
            await _kill_group(proc)
            return ToolResult.failure(
                "timeout",
                f"{d.name} did not finish within {d.timeout_s:g}s and was killed",
                retryable=True,
            )
        except asyncio.CancelledError:
            await _kill_group(proc)
            raise
        out = stdout.decode(errors="replace")[:OUTPUT_LIMIT]
        if proc.returncode != 0:
            err = stderr.decode(errors="replace").strip()[-2000:]
            return ToolResult.failure(
                "exit_status", f"{d.name} exited with status {proc.returncode}: {err or out}"
            )
        try:
            result: Any = json.loads(out)
        except ValueError:
            result = out
        first = out.strip().splitlines()[0][:160] if out.strip() else "(no output)"
        return ToolResult.success(f"{d.name}: {first}", result)


async def _kill_group(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        await asyncio.shield(proc.wait())
