"""Telegram, issue 12 items 4 and 6: answering a notification (a reply to it, its Stop and
Status buttons) and the context an operator points at (a reply, a quote, an external reply),
through python-telegram-bot against the fake Bot API and the model behind the fake Anthropic
API."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from adapters.server.app import App
from runtime import EventType
from tests.adapters.telegram_harness import start_app
from tests.fakes.anthropic_api import FakeAnthropic, Reply, text, tools
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import blocking_tool, until, wait_for

ALICE, STRANGER = 1001, 666
GROUP = -100  # allowed for acme
BUTTONS = [
    [
        {"text": "Stop", "callback_data": "notification_stop"},
        {"text": "Status", "callback_data": "notification_status"},
    ]
]


def last_user_text(body: dict[str, Any]) -> str:
    """The text of the newest user message the model was sent."""
    content = body["messages"][-1]["content"]
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content if b.get("type") == "text")


def notification_message(telegram: FakeTelegram) -> dict[str, Any]:
    """The bot's notification, as Telegram returned it (and would nest it in a reply)."""
    return next(m for m in telegram.posted.values() if m["text"].startswith("\U0001f514"))


def has_notification(telegram: FakeTelegram) -> bool:
    return any(m["text"].startswith("\U0001f514") for m in telegram.posted.values())


def sent_texts(telegram: FakeTelegram, chat: int) -> list[str]:
    return [m["text"] for m in telegram.sent() if m["chat_id"] == chat]


def said(telegram: FakeTelegram, chat: int, start: str) -> bool:
    return any(t.startswith(start) for t in sent_texts(telegram, chat))


def press(telegram: FakeTelegram, data: str, message: dict[str, Any], user: int = ALICE) -> int:
    return telegram.push_callback(data, user=user, message=message)


@pytest.fixture
async def app(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> AsyncIterator[App]:
    app = await start_app(db_path, anthropic_api, telegram_api)
    yield app
    await app.stop()


async def notified(app: App, telegram: FakeTelegram, anthropic: FakeAnthropic) -> dict[str, Any]:
    """Alice asks; the agent raises a notification and finishes its turn."""
    anthropic.script = [
        tools(("notify_operator", {"message": "Disk at 95%\nShall I clean /tmp?"})),
        text("I asked the operator."),
    ]
    telegram.push_message("check the disk", user=ALICE)
    await until(lambda: "I asked the operator." in sent_texts(telegram, ALICE))
    await app.bridge.settle()
    return notification_message(telegram)


async def test_a_reply_to_a_notification_reaches_the_agent_that_raised_it(
    app: App, telegram_api: FakeTelegram, anthropic_api: FakeAnthropic
) -> None:
    notification = await notified(app, telegram_api, anthropic_api)
    assert notification["text"].endswith(
        "raised by agent acme/assistant. Reply to this message to answer it."
    )
    sent = next(m for m in telegram_api.sent() if m["text"].startswith("\U0001f514"))
    assert sent["reply_markup"]["inline_keyboard"] == BUTTONS
    [record] = await app.runtime.store.notifications()

    anthropic_api.script = [text("Cleaning /tmp now.")]
    update = telegram_api.push_message("yes, go ahead", user=ALICE, reply_to_message=notification)
    await until(lambda: "Cleaning /tmp now." in sent_texts(telegram_api, ALICE))

    prompt = last_user_text(anthropic_api.requests[-1])
    assert prompt.startswith(
        f'[The operator answers your notification {record.notification_id}: "Disk at 95%"]'
    )
    assert prompt.endswith("[The operator's message]\nyes, go ahead")
    assert "Shall I clean" not in prompt, "the notification is named, not quoted again"
    entries = await app.runtime.store.messages(session_id=record.session_id)
    assert entries[-1].message.provenance.correlation_id == record.notification_id
    answer = next(m for m in telegram_api.sent() if m["text"] == "Cleaning /tmp now.")
    assert answer["reply_parameters"]["message_id"] == 1000 + update, "answered where written"
    assert telegram_api.refused == []


async def test_a_reply_while_the_agent_works_enters_at_its_next_safe_point(
    db_path: Path, tmp_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    gate, marker = tmp_path / "gate", tmp_path / "pids"
    tool = blocking_tool("wait", gate, marker)
    anthropic_api.script = [
        tools(("notify_operator", {"message": "Deploy blocked: which branch?"}), ("wait", {})),
        text("Deploying main."),
    ]
    app = await start_app(
        db_path, anthropic_api, telegram_api, agent_tools=["notify_operator", "wait"], tools=[tool]
    )
    try:
        telegram_api.push_message("deploy", user=ALICE)
        await wait_for(app.runtime, EventType.TOOL_STARTED, lambda e: e.data.name == "wait")
        await until(lambda: has_notification(telegram_api))
        notification = notification_message(telegram_api)
        [record] = await app.runtime.store.notifications()
        telegram_api.push_message("main", user=ALICE, reply_to_message=notification)
        await until(lambda: app.runtime.status(record.session_id).queued == 1)
        gate.touch()
        admitted = await wait_for(app.runtime, EventType.OPERATOR_INTERJECTION_ADMITTED)
        assert admitted.data.boundary == "after_tool_results"
        await until(lambda: "Deploying main." in sent_texts(telegram_api, ALICE))
        assert len(anthropic_api.requests) == 2, "the same turn, one more round"
        prompt = last_user_text(anthropic_api.requests[1])
        assert f"[The operator answers your notification {record.notification_id}" in prompt
        assert prompt.endswith("[The operator's message]\nmain")
    finally:
        await app.stop()


async def test_a_childs_notification_is_answered_to_its_parent(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    child_steps = [tools(("notify_operator", {"message": "Child needs a key"})), text("done")]
    parent_prompts: list[str] = []

    def respond(body: dict[str, Any]) -> Reply:
        if "private child agent" in str(body.get("system", "")):
            return child_steps.pop(0)
        parent_prompts.append(last_user_text(body))
        return text("parent heard you")

    anthropic_api.script = [tools(("spawn_agent", {"task": "find the key"})), text("spawned")]
    anthropic_api.responder = respond
    app = await start_app(
        db_path, anthropic_api, telegram_api, agent_tools=["notify_operator", "spawn_agent"]
    )
    try:
        telegram_api.push_message("delegate", user=ALICE)
        await until(lambda: has_notification(telegram_api))
        await app.bridge.settle()
        notification = notification_message(telegram_api)
        assert notification["text"].endswith(
            "raised by acme/assistant/child-1, a child agent of acme/assistant; a reply to "
            "this message goes to acme/assistant."
        )
        parent_prompts.clear()
        telegram_api.push_message(
            "the key is in the vault", user=ALICE, reply_to_message=notification
        )
        await until(lambda: bool(parent_prompts))
        await app.bridge.settle()
        [record] = await app.runtime.store.notifications()
        assert record.requested_by_agent_id == "acme/assistant/child-1"
        assert parent_prompts[0].startswith(
            f"[The operator answers your notification {record.notification_id}: "
            '"Child needs a key"]'
        )
        assert parent_prompts[0].endswith("\nthe key is in the vault")
        parent = app.runtime.session(record.session_id)
        assert parent.agent_id == "acme/assistant" and parent.parent_session_id is None
    finally:
        await app.stop()


async def test_notification_buttons_stop_and_status_for_the_operator_only(
    db_path: Path, tmp_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    gate, marker = tmp_path / "never", tmp_path / "pids"
    tool = blocking_tool("wait", gate, marker)
    anthropic_api.script = [
        tools(("notify_operator", {"message": "Long job started"}), ("wait", {})),
    ]
    app = await start_app(
        db_path, anthropic_api, telegram_api, agent_tools=["notify_operator", "wait"], tools=[tool]
    )
    try:
        telegram_api.push_message(
            "run the long job", user=ALICE, chat=GROUP, chat_type="supergroup"
        )
        await wait_for(app.runtime, EventType.TOOL_STARTED, lambda e: e.data.name == "wait")
        await until(lambda: has_notification(telegram_api))
        notification = notification_message(telegram_api)
        assert notification["chat"]["id"] == GROUP
        [record] = await app.runtime.store.notifications()

        press(telegram_api, "notification_status", notification)
        await until(lambda: said(telegram_api, GROUP, "Agent acme/assistant is working"))

        press(telegram_api, "notification_stop", notification, user=STRANGER)
        await until(lambda: said(telegram_api, GROUP, "You are not an operator"))
        refused = [
            e.data for e in await app.runtime.store.events_after(0) if e.type == "inbound_refused"
        ]
        assert [r.sender_id for r in refused] == [str(STRANGER)]
        assert app.runtime.status(record.session_id).run_id is not None, "nothing stopped"

        press(telegram_api, "notification_stop", notification)
        await until(lambda: "Stopped." in sent_texts(telegram_api, GROUP))
        finished = await wait_for(
            app.runtime, EventType.TOOL_FINISHED, lambda e: e.data.name == "wait"
        )
        assert finished.data.status == "cancelled"

        press(telegram_api, "notification_stop", notification)
        await until(lambda: said(telegram_api, GROUP, "Agent acme/assistant is not working"))
        assert len(telegram_api.sent("answerCallbackQuery")) == 4
        assert telegram_api.refused == []
    finally:
        await app.stop()
