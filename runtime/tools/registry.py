"""Tools by name, with their JSON schemas checked before anything runs."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import jsonschema

from runtime.tools.base import Approval, Tool, ToolContext, ToolSpec
from runtime.tools.builtins import BUILTIN_TOOLS
from runtime.tools.command import CommandTool, CommandToolSpec
from runtime.tools.envelope import ToolResult
from runtime.tools.mcp import McpTools
from runtime.tools.memory import MEMORY_TOOLS


class ToolRegistry:
    def __init__(
        self, command_tools: Iterable[CommandToolSpec] = (), mcp: McpTools | None = None
    ) -> None:
        self.mcp = mcp or McpTools()  # listed as each server connects: looked up per call
        self._tools: dict[str, Tool] = {**BUILTIN_TOOLS, **MEMORY_TOOLS}
        self._validators: dict[str, jsonschema.Draft202012Validator] = {}
        for definition in command_tools:
            if definition.name in self._tools:
                raise ValueError(f"tool name {definition.name!r} is defined twice")
            jsonschema.Draft202012Validator.check_schema(definition.input_schema)
            self._tools[definition.name] = CommandTool(definition)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def command_tool_names(self) -> list[str]:
        return [n for n, t in self._tools.items() if isinstance(t, CommandTool)]

    def label(self, name: str) -> str:
        """How progress names a tool to people: an MCP tool as `server.tool`."""
        mcp_tool = None if name in self._tools else self.mcp.tools().get(name)
        if mcp_tool is None:
            return name
        return f"{mcp_tool.server.spec.name}.{mcp_tool.tool_name}"

    def foreign(self, name: str) -> bool:
        """Whether what a tool returns is text from elsewhere (an MCP server's, a command's),
        not Switchboard's own: what the agent keeps after reading it is marked so."""
        tool = self._tools.get(name)
        return isinstance(tool, CommandTool) or (tool is None and name in self.mcp.tools())

    def approval(self, name: str, allowed: Iterable[str]) -> Approval | None:
        """Whether a call of `name` (offered to an agent with `allowed`) must wait for an
        operator's approval; None for a tool that runs at once, or that is not offered."""
        tool = self._tools.get(name)
        if isinstance(tool, CommandTool):
            return tool.definition.approval if name in set(allowed) else None
        mcp_tool = None if tool else self.mcp.tools().get(name)
        if mcp_tool is None or name not in set(self.mcp.expand(allowed)):
            return None
        approval = mcp_tool.server.spec.approval
        return approval if approval is not None and approval.covers(mcp_tool.tool_name) else None

    def specs(self, names: Iterable[str]) -> list[ToolSpec]:
        """The tools `names` offer now (an MCP server's as it listed them last)."""
        mcp = self.mcp.tools()
        found = [self._tools.get(n) or mcp.get(n) for n in self.mcp.expand(names)]
        return [t.spec for t in found if t is not None]

    async def run(
        self, name: str, tool_input: dict[str, Any], ctx: ToolContext, allowed: Iterable[str]
    ) -> ToolResult:
        if name not in self._tools and name in set(self.mcp.expand(allowed)):
            mcp_tool = self.mcp.tools().get(name)
            if mcp_tool is not None:  # the server checks its own input schema
                return await mcp_tool.run(tool_input, ctx)
        tool = self._tools.get(name)
        if tool is None or name not in set(allowed):
            return ToolResult.failure("unknown_tool", f"no tool named {name!r} is offered here")
        validator = self._validators.get(name)
        if validator is None:
            validator = self._validators[name] = jsonschema.Draft202012Validator(
                tool.spec.input_schema
            )
        error = jsonschema.exceptions.best_match(validator.iter_errors(tool_input))
        if error is not None:
            return ToolResult.failure("invalid_input", f"input for {name}: {error.message}")
        return await tool.run(tool_input, ctx)
