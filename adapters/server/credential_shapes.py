"""What each answer `switchboard init` takes looks like, checked on this machine before
anything is sent: a token pasted into the wrong question (a Slack app-level token as the bot
token, a Slack token as the Telegram one) is named for what it is instead of reaching a
platform. The rules are the platforms' published shapes (each platform's `setup.py`), kept
loose where they do not fix a length, so that no real token is refused here."""

from __future__ import annotations

import re

from adapters.platform_setup import Shape
from adapters.platforms import platforms

ANTHROPIC_KEY = Shape(
    "an Anthropic API key",
    re.compile(r"sk-ant-[A-Za-z0-9_-]+"),
    "starts with sk-ant- (console.anthropic.com, API Keys)",
)


def problem(value: str, shape: Shape) -> str | None:
    """None when `value` has the shape; else what is wrong with it and what is expected."""
    if shape.pattern.fullmatch(value):
        return None
    wanted = f"{shape.name} {shape.expected}"
    if not value:
        return f"nothing was given: {wanted}"
    # What a value recognizably is, to name it when it is given to the wrong question.
    recognized = [*(s for p in platforms() for s in p.setup.recognized), ANTHROPIC_KEY]
    seen = next((s.name for s in recognized if s.pattern.fullmatch(value)), None)
    if seen is not None:
        return f"that is {seen}, not {shape.name}: {wanted}"
    if any(c.isspace() for c in value):
        return f"that has a space in it: {wanted} (paste it alone)"
    return f"that is not {shape.name}: {wanted}"
