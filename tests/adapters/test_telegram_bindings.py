"""Which agent answers where, and when it answers in a group, on Telegram: python-telegram-bot
against the fake Bot API, the real App, the fake Anthropic API (which agent answered is told
by the system prompt the model was sent)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from adapters.server.app import App
from bridge.commands import CommandName
from bridge.commands import menu as command_menu
from bridge.events import BridgeEventType
from runtime.store.store import Store
from tests.adapters.telegram_harness import replies, start_app
from tests.fakes.anthropic_api import FakeAnthropic, text
from tests.fakes.telegram_api import BOT_USERNAME, FakeTelegram
from tests.runtime.helpers import until

ALICE, STRANGER = 1001, 666
GROUP, OTHER_GROUP = -100, -200
MENTION = f"@{BOT_USERNAME}"

AGENTS = [
    {"id": "assistant", "system_prompt": "You are the default agent."},
    {"id": "ops", "system_prompt": "You are the ops agent."},
    {"id": "deploys", "system_prompt": "You are the deploys agent."},
    {"id": "private", "system_prompt": "You are the private agent."},
]


def system_of(request: dict[str, Any]) -> str:
    return " ".join(block["text"] for block in request.get("system", []))


def bot_message(chat: int, message_id: int = 5001) -> dict[str, Any]:
    """One of the bot's own messages, as a reply to it carries it."""
    return {
        "message_id": message_id,
        "date": int(time.time()),
        "chat": {"id": chat, "type": "supergroup"},
        "from": {"id": 123456, "is_bot": True, "first_name": "Switchboard"},
        "text": "an earlier answer",
    }


async def ignored_events(app: App) -> list[dict[str, Any]]:
    store: Store = app.runtime.store
    return [
        e.data.model_dump()
        for e in await store.events_after(0)
        if e.type == BridgeEventType.INBOUND_IGNORED
    ]


async def test_each_chat_topic_and_dm_is_answered_by_its_bound_agent(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    bindings = [
        {"agent": "ops", "telegram_chat": GROUP},
        {"agent": "deploys", "telegram_chat": GROUP, "telegram_topic": 7},
        {"agent": "private", "dm": True, "platform": "telegram"},
    ]
    app = await start_app(
        db_path,
        anthropic_api,
        telegram_api,
        chats=(GROUP, OTHER_GROUP),
        acme_extra={"agents": AGENTS, "bindings": bindings},
    )
    try:
        sends: list[tuple[dict[str, Any], str]] = [
            ({"chat": GROUP, "chat_type": "supergroup", "thread": 7}, "deploys"),
            ({"chat": GROUP, "chat_type": "supergroup", "thread": 9}, "ops"),
            ({"chat": GROUP, "chat_type": "supergroup"}, "ops"),
            ({}, "private"),
            ({"chat": OTHER_GROUP, "chat_type": "supergroup"}, "default"),
        ]
        anthropic_api.script = [text(f"answer {i}") for i in range(len(sends))]
        for i, (where, _) in enumerate(sends):
            telegram_api.push_message(f"question {i}", user=ALICE, **where)
            await until(lambda i=i: len(anthropic_api.requests) == i + 1)
        answered_by = [system_of(r) for r in anthropic_api.requests]
        for (_, agent), system in zip(sends, answered_by, strict=True):
            assert f"You are the {agent} agent." in system
        await until(lambda: len(telegram_api.sent()) >= len(sends))
        assert telegram_api.refused == []
    finally:
        await app.stop()


async def test_group_chatter_is_ignored_and_a_mention_or_a_reply_is_answered(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    app = await start_app(
        db_path,
        anthropic_api,
        telegram_api,
        acme_extra={"respond_to": ["mention", "reply"]},
    )
    try:
        group: dict[str, Any] = {"chat": GROUP, "chat_type": "supergroup"}
        anthropic_api.script = [text("on it"), text("still on it")]
        telegram_api.push_message("lunch anyone?", user=STRANGER, **group)
        telegram_api.push_message("sure, 12:30", user=ALICE, **group)
        question = f"{MENTION} is the build green?"
        mention = telegram_api.entity("mention", question, MENTION)
        asked = telegram_api.push_message(question, user=ALICE, entities=[mention], **group)
        await until(lambda: len(replies(telegram_api, GROUP)) == 1)
        telegram_api.push_message(
            "and the deploy?", user=ALICE, reply_to=bot_message(GROUP), **group
        )
        await until(lambda: len(replies(telegram_api, GROUP)) == 2)

        prompts = [r["messages"][-1]["content"] for r in anthropic_api.requests]
        assert "is the build green?" in str(prompts[0]) and MENTION not in str(prompts[0])
        assert "and the deploy?" in str(prompts[1])
        assert len(anthropic_api.requests) == 2, "the chatter never reached the model"
        assert [r["text"] for r in replies(telegram_api, GROUP)] == ["on it", "still on it"]
        ignored = await ignored_events(app)
        assert [e["sender_id"] for e in ignored] == [str(STRANGER), str(ALICE)]
        counted = app.bridge.metrics.registry.get_sample_value
        for sender in ("operator", "other"):
            labels = {"workspace": "acme", "sender": sender}
            assert counted("switchboard_messages_ignored_total", labels) == 1
        assert not [m for m in telegram_api.sent() if m["chat_id"] == STRANGER]
        reactions = telegram_api.sent("setMessageReaction")
        assert {"chat_id": GROUP, "message_id": 1000 + asked} == {
            k: reactions[0][k] for k in ("chat_id", "message_id")
        }
        assert reactions[0]["reaction"] == [{"type": "emoji", "emoji": "\U0001f440"}]
        assert telegram_api.refused == []
    finally:
        await app.stop()


async def test_a_stranger_who_mentions_the_bot_is_refused_once(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    app = await start_app(db_path, anthropic_api, telegram_api)
    try:
        group: dict[str, Any] = {"chat": GROUP, "chat_type": "supergroup"}
        for words in ("do my homework", "please"):
            said = f"{MENTION} {words}"
            telegram_api.push_message(
                said,
                user=STRANGER,
                entities=[telegram_api.entity("mention", said, MENTION)],
                **group,
            )
        anthropic_api.script = [text("hello alice")]
        telegram_api.push_message("hello", user=ALICE, **group)  # answered: respond_to all
        await until(lambda: any(r["text"] == "hello alice" for r in replies(telegram_api, GROUP)))
        refusals = [r for r in replies(telegram_api, GROUP) if r["text"] != "hello alice"]
        assert len(refusals) == 1 and refusals[0]["text"].startswith("You are not an operator")
        assert len(anthropic_api.requests) == 1
    finally:
        await app.stop()


async def test_a_command_addressed_to_the_bot_works_in_a_group_and_others_are_left_alone(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    app = await start_app(
        db_path,
        anthropic_api,
        telegram_api,
        acme_extra={
            "agents": AGENTS,
            "bindings": [{"agent": "ops", "telegram_chat": GROUP, "respond_to": "mention"}],
        },
    )
    try:
        group: dict[str, Any] = {"chat": GROUP, "chat_type": "supergroup"}
        for command in ("/status@some_other_bot", f"/status@{BOT_USERNAME}"):
            entity = telegram_api.entity("bot_command", command, command)
            telegram_api.push_message(command, user=ALICE, entities=[entity], **group)
        await until(lambda: len(replies(telegram_api, GROUP)) == 1)
        [status] = replies(telegram_api, GROUP)
        assert "\nAgent ops answers here.\n" in status["text"]
        menu = telegram_api.sent("setMyCommands")[0]["commands"]
        assert [c["command"] for c in menu] == [name.value for name in CommandName]
        assert [(c["command"], c["description"]) for c in menu] == command_menu()
        assert telegram_api.refused == []
    finally:
        await app.stop()


async def test_a_new_binding_takes_over_at_new_and_status_says_so(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    # "done": the old agent's memory flush /new asks for, before the new agent's first turn
    anthropic_api.script = [text("one"), text("two"), text("done"), text("three")]
    app = await start_app(db_path, anthropic_api, telegram_api, acme_extra={"agents": AGENTS})
    try:
        telegram_api.push_message("before", user=ALICE)
        await until(lambda: len(replies(telegram_api, ALICE)) == 1)
    finally:
        await app.stop()
    bound = {"agents": AGENTS, "bindings": [{"agent": "private", "dm": True}]}
    app = await start_app(db_path, anthropic_api, telegram_api, acme_extra=bound)
    try:
        telegram_api.push_message("after the change", user=ALICE)
        await until(lambda: len(replies(telegram_api, ALICE)) == 2)
        telegram_api.push_message("/status", user=ALICE)
        await until(lambda: len(replies(telegram_api, ALICE)) == 3)
        status = replies(telegram_api, ALICE)[2]["text"]
        assert status.startswith("assistant: idle.\n")
        assert "now bound to agent private;" in status
        telegram_api.push_message("/new", user=ALICE)
        telegram_api.push_message("fresh", user=ALICE)
        await until(lambda: len(anthropic_api.requests) == 4)
        systems = [system_of(r) for r in anthropic_api.requests]
        assert ["default" in s for s in systems] == [True, True, True, False]
        assert "You are the private agent." in systems[3]
    finally:
        await app.stop()
