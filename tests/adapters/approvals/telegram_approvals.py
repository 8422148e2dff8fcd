"""What the approval tests share: a workspace whose `deploy` command tool asks an operator
first, the approval message as Telegram shows it, and pressing its buttons."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from adapters.server.app import App
from runtime.tools.base import Approval
from runtime.tools.command import CommandToolSpec
from tests.adapters.telegram_harness import start_app
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.telegram_api import FakeTelegram

ALICE, STRANGER = 1001, 666
LOCK = "\U0001f510"
APPROVE, DENY = "approval_approve", "approval_deny"

# The tool appends a line to its log each time it runs, so a test counts runs.
DEPLOY_SCRIPT = """
import json, sys
data = json.load(sys.stdin)
with open(sys.argv[1], "a") as log:
    log.write(json.dumps(data) + "\\n")
print("deployed " + data.get("host", "?"))
"""


def deploy_tool(tmp_path: Path, *, timeout_s: float = 600.0) -> CommandToolSpec:
    script = tmp_path / "deploy.py"
    script.write_text(DEPLOY_SCRIPT)
    return CommandToolSpec(
        "deploy",
        "Deploy to a host",
        (sys.executable, str(script), str(tmp_path / "deploy.log")),
        30.0,
        approval=Approval(timeout_s),
    )


def runs(tmp_path: Path) -> list[dict[str, Any]]:
    """Every run of the deploy tool, with its input."""
    log = tmp_path / "deploy.log"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


async def start(
    db_path: Path,
    tmp_path: Path,
    anthropic_api: FakeAnthropic,
    telegram: FakeTelegram,
    *,
    timeout_s: float = 600.0,
    agent_tools: Sequence[str] = ("notify_operator", "spawn_agent", "deploy"),
    acme_extra: dict[str, Any] | None = None,
) -> App:
    return await start_app(
        db_path,
        anthropic_api,
        telegram,
        agent_tools=agent_tools,
        tools=[deploy_tool(tmp_path, timeout_s=timeout_s)],
        acme_extra=acme_extra,
    )


def approval_messages(telegram: FakeTelegram, chat: int = ALICE) -> list[dict[str, Any]]:
    """The approval requests posted in `chat`, oldest first, as Telegram returned them."""
    return [
        m
        for m in telegram.posted.values()
        if m["chat"]["id"] == chat and m["text"].startswith(LOCK)
    ] + [
        m
        for m in telegram.posted.values()
        if m["chat"]["id"] == chat and m["text"].startswith("(Switchboard restarted")
    ]


def buttons(message: dict[str, Any]) -> list[str]:
    markup = message.get("reply_markup")
    if isinstance(markup, str):
        markup = json.loads(markup)
    return [b["callback_data"] for row in (markup or {}).get("inline_keyboard", []) for b in row]


def press(telegram: FakeTelegram, data: str, message: dict[str, Any], user: int = ALICE) -> int:
    return telegram.push_callback(data, user=user, message=message)


async def quiet(app: App) -> None:
    """Until every event so far is handled and its messages sent (a turn may still wait)."""
    await app.bridge.followers.caught_up(app.runtime.store.last_seq)
    await app.bridge.outbox.idle()
