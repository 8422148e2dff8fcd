"""Built-in tools: notify_operator, sleep, spawn_agent, schedule_wakeup. Their effects go
through the context."""

from __future__ import annotations

from typing import Any

from runtime.tools.base import ToolContext, ToolSpec, Woken
from runtime.tools.envelope import ToolResult

MAX_SLEEP_S = 3600.0
MAX_NOTE_CHARS = 4000  # of a wake-up's note: what to do then, not the material to do it with


class NotifyOperator:
    spec = ToolSpec(
        name="notify_operator",
        description=(
            "Tell a human operator something that needs their attention. The turn goes on; "
            "this does not wait for an answer."
        ),
        input_schema={
            "type": "object",
            "properties": {"message": {"type": "string", "description": "What to tell them."}},
            "required": ["message"],
        },
    )

    async def run(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return await ctx.notify(str(tool_input.get("message", "")))


class Sleep:
    spec = ToolSpec(
        name="sleep",
        description=("Wait for a number of seconds. Ends early when an operator message arrives."),
        input_schema={
            "type": "object",
            "properties": {"seconds": {"type": "number", "minimum": 0, "maximum": MAX_SLEEP_S}},
            "required": ["seconds"],
        },
    )

    async def run(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        seconds = float(tool_input["seconds"])
        match await ctx.wait_for_interjection(seconds):
            case Woken.OPERATOR:
                return ToolResult.success(
                    "woke early: an operator message is waiting", {"slept": False, "woken": True}
                )
            case Woken.STOPPING:  # a stop need not wait out the sleep: its result is kept
                return ToolResult.success(
                    "woke early: Switchboard stopped (a restart, or another replica took over);"
                    " sleep again if there is still reason to wait",
                    {"slept": False, "woken": False, "stopped": True},
                )
        return ToolResult.success(f"slept {seconds:g}s", {"slept": True, "woken": False})


class SpawnAgent:
    spec = ToolSpec(
        name="spawn_agent",
        description=(
            "Start a private child agent on a task, described in free text. It works in the "
            "background; its final answer comes back to you as a task result message."
        ),
        input_schema={
            "type": "object",
            "properties": {"task": {"type": "string", "description": "The child's task."}},
            "required": ["task"],
        },
    )

    async def run(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return await ctx.spawn(str(tool_input.get("task", "")))


class ScheduleWakeup:
    spec = ToolSpec(
        name="schedule_wakeup",
        description=(
            "End this turn now and pick up again later: at that time you get a new turn whose "
            "prompt is your note. Use it instead of sleep for any wait over a few minutes; it "
            "survives restarts. An operator's message still reaches you before then. One "
            "wake-up is pending at a time: a later call replaces the earlier one."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "when": {
                    "type": "string",
                    "description": 'A delay ("90s", "15m", "2h", "1d") or an ISO 8601 time.',
                },
                "note": {
                    "type": "string",
                    "description": "What to do then, for yourself: you will read it then.",
                    "maxLength": MAX_NOTE_CHARS,
                },
            },
            "required": ["when", "note"],
        },
    )

    async def run(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        note = str(tool_input.get("note", "")).strip()
        if not note:
            return ToolResult.failure("invalid_input", "note must say what to do then")
        if len(note) > MAX_NOTE_CHARS:
            return ToolResult.failure(
                "invalid_input",
                f"note has {len(note)} characters; say what to do then in at most {MAX_NOTE_CHARS}",
            )
        return await ctx.wake_later(str(tool_input.get("when", "")), note)


BUILTIN_TOOLS = {
    t.spec.name: t for t in (NotifyOperator(), Sleep(), SpawnAgent(), ScheduleWakeup())
}
CHILD_BUILTINS = ("notify_operator", "sleep")
