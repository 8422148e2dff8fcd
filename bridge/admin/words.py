"""The console's words for tool calls: how long one took and its input on one line (what a
session does now is `bridge.activity`'s, the words every surface uses)."""

from __future__ import annotations

import json
from typing import Any

SHORT_INPUT = 80  # characters of a tool call's input on its one line
CONFIG_ADMIN = "admin"  # the name of the admin of `[admin] token` (the workspaces' are named)


def by_admin(name: str) -> str:
    """An admin as the one who did something: "admin alice"; the config's own admin, whose
    name is "admin", is "the admin" (not "admin admin")."""
    return "the admin" if name == CONFIG_ADMIN else f"admin {name}"


def took(seconds: float | None) -> str:
    """A duration as people read it: "0.4 s", "12 s", "3 min 5 s"; empty when unknown."""
    if seconds is None:
        return ""
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s"


def short_input(tool_input: dict[str, Any]) -> str:
    """A tool call's input on one line: `key=value` pairs (a lone value bare), cut with an
    ellipsis."""
    if len(tool_input) == 1:
        [value] = tool_input.values()
        line = _one_line(value)
    else:
        line = ", ".join(f"{k}={_one_line(v)}" for k, v in tool_input.items())
    line = " ".join(line.split())
    return line if len(line) <= SHORT_INPUT else line[: SHORT_INPUT - 1] + "\u2026"


def _one_line(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def chars(text: str) -> str:
    return f"{len(text):,} char{'s' if len(text) != 1 else ''}"
