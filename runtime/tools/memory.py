"""The memory tools: remember, recall, forget (issue 40). Writes are add and supersede (a new
memory names the one it replaces); nothing is edited in place. Which memories a call may see
and write is the store's business (`runtime/memory.py`): the effects go through the context,
bound to the calling turn's audience."""

from __future__ import annotations

from typing import Any

from runtime.tools.base import ToolContext, ToolSpec
from runtime.tools.envelope import ToolResult

OFF = "memory is off for this agent"


class Remember:
    spec = ToolSpec(
        name="remember",
        description=(
            "Keep a fact for later conversations, in words that stand on their own. Scope "
            "'operator': for the person you talk with alone (their private chat only; the "
            "default there); 'agent': for everyone. To correct one, set supersedes to its id."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "text": {"type": "string"},
                "scope": {"type": "string", "enum": ["operator", "agent"]},
                "supersedes": {"type": "string"},
            },
            "required": ["text"],
        },
    )

    async def run(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        if ctx.memory is None:
            return ToolResult.failure("not_offered", OFF)
        scope = tool_input.get("scope")
        supersedes = tool_input.get("supersedes")
        return await ctx.memory.remember(
            str(tool_input.get("text", "")),
            str(scope) if scope else None,
            str(supersedes) if supersedes else None,
            ctx.tool_use_id,
        )


class Recall:
    spec = ToolSpec(
        name="recall",
        description=(
            "Search your memories of earlier conversations: the best matches, each with its "
            "id, scope, date and source."
        ),
        input_schema={
            "type": "object",
            "properties": {"query": {"type": "string"}},
            "required": ["query"],
        },
    )

    async def run(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        if ctx.memory is None:
            return ToolResult.failure("not_offered", OFF)
        return await ctx.memory.recall(str(tool_input.get("query", "")))


class Forget:
    spec = ToolSpec(
        name="forget",
        description="Delete one of your memories, by its id.",
        input_schema={
            "type": "object",
            "properties": {"id": {"type": "string"}},
            "required": ["id"],
        },
    )

    async def run(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        if ctx.memory is None:
            return ToolResult.failure("not_offered", OFF)
        return await ctx.memory.forget(str(tool_input.get("id", "")))


MEMORY_TOOLS = {t.spec.name: t for t in (Remember(), Recall(), Forget())}
CHILD_MEMORY_TOOLS = ("recall",)  # a child reads its root agent's memories; it keeps none
