"""What each answer `switchboard init` takes looks like, checked on this machine before
anything is sent: a token pasted into the wrong question (a Slack app-level token as the bot
token, a Slack token as the Telegram one) is named for what it is instead of reaching a
platform. The rules are the platforms' published shapes, kept loose where they do not fix a
length, so that no real token is refused here."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Shape:
    name: str  # "a Telegram bot token"
    pattern: re.Pattern[str]
    expected: str  # what one looks like and where to find it, after the name


TELEGRAM_TOKEN = Shape(
    "a Telegram bot token",
    # Telegram's own examples have 34 characters after the colon, @BotFather's tokens 35.
    re.compile(r"[0-9]+:[A-Za-z0-9_-]{30,}"),
    "is the bot's id, a colon and about 35 letters, digits, _ or - "
    "(@BotFather gives it: 123456789:AAH...)",
)
SLACK_BOT_TOKEN = Shape(
    "a Slack bot token",
    re.compile(r"(xoxe\.)?xoxb-[A-Za-z0-9-]+"),  # xoxe.xoxb-: with token rotation on
    "starts with xoxb- (your app's page, OAuth & Permissions: Bot User OAuth Token)",
)
SLACK_APP_TOKEN = Shape(
    "a Slack app-level token",
    re.compile(r"xapp-[A-Za-z0-9-]+"),
    "starts with xapp- (your app's page, Basic Information: App-Level Tokens, with the "
    "connections:write scope)",
)
SLACK_SIGNING_SECRET = Shape(
    "a Slack signing secret",
    re.compile(r"[0-9a-fA-F]{16,}"),
    "is hex digits, 0-9 and a-f (your app's page, Basic Information: Signing Secret)",
)
SLACK_TEAM_ID = Shape(
    "a Slack team id",
    re.compile(r"[TE][A-Z0-9]+"),
    "starts with T (in a browser, your workspace's address: app.slack.com/client/T...)",
)
ANTHROPIC_KEY = Shape(
    "an Anthropic API key",
    re.compile(r"sk-ant-[A-Za-z0-9_-]+"),
    "starts with sk-ant- (console.anthropic.com, API Keys)",
)
TELEGRAM_USER_ID = Shape(
    "a Telegram user id",
    re.compile(r"[0-9]+"),
    "is a number (@userinfobot tells you yours)",
)
SLACK_USER_ID = Shape(
    "a Slack user id",
    re.compile(r"[UW][A-Z0-9]+"),
    "starts with U or W (your Slack profile, the ... menu: Copy member ID)",
)

# What a value recognizably is, to name it when it is given to the wrong question.
_RECOGNIZED = [
    TELEGRAM_TOKEN,
    SLACK_BOT_TOKEN,
    SLACK_APP_TOKEN,
    Shape("a Slack user token", re.compile(r"(xoxe\.)?xoxp-.+"), ""),
    Shape("a Slack token of another kind", re.compile(r"xox[a-z](\.|-).+"), ""),
    ANTHROPIC_KEY,
]


def problem(value: str, shape: Shape) -> str | None:
    """None when `value` has the shape; else what is wrong with it and what is expected."""
    if shape.pattern.fullmatch(value):
        return None
    wanted = f"{shape.name} {shape.expected}"
    if not value:
        return f"nothing was given: {wanted}"
    seen = next((s.name for s in _RECOGNIZED if s.pattern.fullmatch(value)), None)
    if seen is not None:
        return f"that is {seen}, not {shape.name}: {wanted}"
    if any(c.isspace() for c in value):
        return f"that has a space in it: {wanted} (paste it alone)"
    return f"that is not {shape.name}: {wanted}"
