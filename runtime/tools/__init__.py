"""Tools an agent may call, and the envelope they return."""

from runtime.tools.base import Tool, ToolContext, ToolSpec
from runtime.tools.command import CommandTool, CommandToolSpec
from runtime.tools.envelope import ToolErrorInfo, ToolResult, ToolStatus
from runtime.tools.registry import ToolRegistry

__all__ = [
    "CommandTool",
    "CommandToolSpec",
    "Tool",
    "ToolContext",
    "ToolErrorInfo",
    "ToolRegistry",
    "ToolResult",
    "ToolSpec",
    "ToolStatus",
]
