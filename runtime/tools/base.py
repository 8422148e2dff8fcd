"""The tool interface and the context a running tool gets from its turn."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

from runtime.tools.envelope import ToolResult


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    description: str
    input_schema: dict[str, Any]
    _chars: int = field(default=-1, init=False, repr=False, compare=False)

    @property
    def chars(self) -> int:
        """The characters a model reads of it (a request's estimate): counted when first
        asked, not each round (an MCP server's tools are made anew as they are listed)."""
        if self._chars < 0:
            schema = len(json.dumps(self.input_schema))
            object.__setattr__(self, "_chars", len(self.name) + len(self.description) + schema)
        return self._chars


@dataclass(frozen=True, slots=True)
class Approval:
    """An operator must approve each call before it runs; no answer in `timeout_s` is a no.
    For an MCP server, `tools` names the tools it covers (None: all of them)."""

    timeout_s: float = 600.0
    tools: frozenset[str] | None = None

    def covers(self, tool: str) -> bool:
        return self.tools is None or tool in self.tools


class Woken(StrEnum):
    """Why a turn's wait (the sleep tool's) ended before its time, or that it did not."""

    TIMED_OUT = "timed_out"
    OPERATOR = "operator"  # an operator's message is waiting
    STOPPING = "stopping"  # Switchboard is stopping: the turn hands back


@dataclass(frozen=True, slots=True)
class ToolContext:
    """What a tool may do besides compute: each callable is bound to the calling turn."""

    session_id: str
    run_id: str
    tool_use_id: str
    notify: Callable[[str], Awaitable[ToolResult]]
    spawn: Callable[[str], Awaitable[ToolResult]]
    wait_for_interjection: Callable[[float], Awaitable[Woken]]
    # schedule_wakeup: (when, note) -> the result that ends the turn
    wake_later: Callable[[str, str], Awaitable[ToolResult]]
    # remember, recall, forget: the agent's memories as this turn may see and write them;
    # None where the agent keeps none
    memory: TurnMemories | None = None


class TurnMemories(Protocol):
    """The memory tools' effects, bound to the calling turn: who it speaks for (its audience),
    its session and message (runtime/recall.py)."""

    async def remember(
        self, text: str, scope: str | None, supersedes: str | None, key: str
    ) -> ToolResult: ...

    async def recall(self, query: str) -> ToolResult: ...

    async def forget(self, memory_id: str) -> ToolResult: ...


class Tool(Protocol):
    @property
    def spec(self) -> ToolSpec: ...

    async def run(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult: ...
