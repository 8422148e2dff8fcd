"""`/status` in a Telegram chat while the agent works, as the operator reads it on a phone:
what it does now in words (the tool it runs, the call it waits for them to approve, the
child agent it waits for), for how long, its queue and what its queue mode means; no run
ids, no internal state names. Telegram shows a tool's name as code (the answer's markdown,
in the Bot API's HTML)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from adapters.server.app import App
from runtime.events import EventType
from tests.adapters.approvals.telegram_approvals import ALICE, approval_messages, start
from tests.adapters.telegram_harness import replies
from tests.fakes.anthropic_api import FakeAnthropic, Reply, text, tools
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until, wait_for

STEER = (
    "Queue: empty (mode steer: a message sent during a turn reaches the agent at its next step)."
)


async def status_of(app: App, telegram: FakeTelegram) -> str:
    """Send /status as alice; the answer."""
    before = len(replies(telegram, ALICE))
    telegram.push_message("/status", user=ALICE)
    await until(lambda: any(_is_status(m["text"]) for m in replies(telegram, ALICE)[before:]))
    return next(m["text"] for m in replies(telegram, ALICE)[before:] if _is_status(m["text"]))


def _is_status(said: str) -> bool:
    return said.startswith("assistant: ")


async def test_status_says_what_the_agent_does_now_in_words(
    db_path: Path, tmp_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    app = await start(
        db_path,
        tmp_path,
        anthropic_api,
        telegram_api,
        agent_tools=("sleep", "deploy", "spawn_agent"),
    )
    anthropic_api.script = [
        tools(("sleep", {"seconds": 60})),
        tools(("deploy", {"host": "web-1"})),
        text("Deployed web-1."),
    ]
    try:
        telegram_api.push_message("rest a minute", user=ALICE)
        await wait_for(app.runtime, EventType.TOOL_STARTED)

        status = await status_of(app, telegram_api)

        first, *rest = status.split("\n")
        assert first.startswith("assistant: running tool <code>sleep</code> for "), status
        assert rest[0].startswith("This turn has run for "), status
        assert STEER in rest, status
        assert "Undelivered notifications: none." in rest, status
        assert "run_" not in status and "waiting" not in first, "no ids, no runtime step names"

        telegram_api.push_message("/stop", user=ALICE)
        await until(lambda: "Stopped." in [m["text"] for m in replies(telegram_api, ALICE)])
        await app.bridge.settle()
        assert (await status_of(app, telegram_api)).startswith("assistant: idle.\n")

        telegram_api.push_message("deploy web-1", user=ALICE)
        await until(lambda: bool(approval_messages(telegram_api)))

        status = await status_of(app, telegram_api)

        assert status.startswith("assistant: waiting for you to approve <code>deploy</code> for ")
        assert status.split("\n")[1].startswith("This turn has run for "), status

        telegram_api.push_message("/deny", user=ALICE)
        await until(lambda: "Deployed web-1." in telegram_api.chat(ALICE))
        child_steps = [tools(("deploy", {"host": "db2"})), text("done")]
        parent_steps = [tools(("spawn_agent", {"task": "deploy db2"})), text("A helper is on it.")]

        def respond(body: dict[str, Any]) -> Reply:
            child = "private child agent" in str(body.get("system", ""))
            return (child_steps if child else parent_steps).pop(0)

        anthropic_api.responder = respond
        telegram_api.push_message("have a helper deploy db2", user=ALICE)
        await wait_for(
            app.runtime, EventType.APPROVAL_REQUESTED, lambda e: "child" in e.data.agent_id
        )
        await until(lambda: "A helper is on it." in telegram_api.chat(ALICE))

        status = await status_of(app, telegram_api)

        first, second, *_ = status.split("\n")
        assert first.startswith("assistant: waiting for its child agent assistant/child-1 for ")
        waits = "Child agent assistant/child-1: waiting for you to approve <code>deploy</code>"
        assert second.startswith(waits), status
    finally:
        await app.stop()
