"""The console's words for what a session and its tool calls are doing: what an admin reads
instead of the runtime's step names ("waiting", "model round 2") and its tool inputs."""

from __future__ import annotations

import json
import re
from typing import Any

from bridge import texts

SHORT_INPUT = 80  # characters of a tool call's input on its one line

_TOOL_STEP = re.compile(r"^running (?P<tool>[^,]+)")
_APPROVAL_STEP = re.compile(r"^waiting for an operator to approve (?P<tool>.+)$")
WAITING_FOR_MESSAGE = "waiting for an operator\u2019s next message"


def doing(running: bool, step: str | None, queued: int) -> str:
    """What a session does now, in the words `/status` uses (`texts.DOING_*`), from the
    runtime's state: `running` whether a turn runs, `step` its name for the turn's step."""
    if not running:
        return texts.DOING_QUEUED if queued else texts.DOING_IDLE
    if step is None:
        return texts.DOING_THINKING
    if found := _TOOL_STEP.match(step):
        return texts.DOING_TOOL.format(tool=found["tool"])
    if found := _APPROVAL_STEP.match(step):
        return texts.DOING_APPROVAL.format(whom=texts.APPROVER_ANY, tool=found["tool"])
    if step == "waiting":  # a tool waits a moment for the operator to say more
        return WAITING_FOR_MESSAGE
    if step == "waiting to start":
        return texts.DOING_QUEUED
    return texts.DOING_THINKING  # a model round, or summarizing the earlier conversation


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
