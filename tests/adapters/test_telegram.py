"""Telegram end to end: python-telegram-bot against the loopback fake Bot API (checked
against the published spec), the real App, bridge and runtime, the fake Anthropic API."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from pytest_aiohttp import AiohttpServer

from adapters.server.app import App
from config import ConfigError
from runtime.events import EventType
from runtime.store.store import Store
from tests.adapters.cli_process import run_to_end
from tests.adapters.telegram_harness import replies, start_app
from tests.config_file import workspace
from tests.fakes.anthropic_api import FakeAnthropic, text, tools
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import blocking_tool, until, wait_for
from tests.topology import drained


@pytest.fixture
async def app(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> AsyncIterator[App]:
    app = await start_app(db_path, anthropic_api, telegram_api)
    yield app
    await app.stop()


async def test_dm_gets_a_reply_quoting_the_message(
    app: App, telegram_api: FakeTelegram, anthropic_api: FakeAnthropic
) -> None:
    anthropic_api.script = [text("Hello **Alice** & co")]
    update = telegram_api.push_message("hi", user=1001)
    await until(lambda: bool(replies(telegram_api, 1001)))
    [reply] = replies(telegram_api, 1001)
    assert reply["text"] == "Hello <b>Alice</b> &amp; co" and reply["parse_mode"] == "HTML"
    assert reply["reply_parameters"]["message_id"] == 1000 + update
    assert telegram_api.sent("setMyCommands"), "commands are registered"
    assert telegram_api.refused == []


async def test_unknown_user_and_group_not_allowed(
    app: App, telegram_api: FakeTelegram, anthropic_api: FakeAnthropic
) -> None:
    telegram_api.push_message("let me in", user=666)
    telegram_api.push_message("hi all", user=1001, chat=-999, chat_type="supergroup")
    await until(lambda: len(telegram_api.sent()) == 2)
    assert replies(telegram_api, 666)[0]["text"].startswith("You are not an operator")
    assert replies(telegram_api, -999)[0]["text"].startswith("I don't take instructions")
    assert anthropic_api.requests == []


async def test_forum_topic_is_its_own_session_and_answered_in_it(
    app: App, telegram_api: FakeTelegram, anthropic_api: FakeAnthropic
) -> None:
    anthropic_api.script = [text("in topic 7"), text("in topic 9")]
    telegram_api.push_message("one", user=1001, chat=-100, chat_type="supergroup", thread=7)
    await until(lambda: len(replies(telegram_api, -100)) == 1)
    telegram_api.push_message("two", user=1001, chat=-100, chat_type="supergroup", thread=9)
    await until(lambda: len(replies(telegram_api, -100)) == 2)
    first, second = replies(telegram_api, -100)
    assert (first["text"], first["message_thread_id"]) == ("in topic 7", 7)
    assert (second["text"], second["message_thread_id"]) == ("in topic 9", 9)
    assert len(anthropic_api.requests[1]["messages"]) == 1, "topic 9 has its own session"


async def test_a_10000_character_answer_arrives_whole_and_in_order(
    app: App, telegram_api: FakeTelegram, anthropic_api: FakeAnthropic
) -> None:
    lines = [f"{i:05d} " + "lorem ipsum dolor sit amet " * 3 for i in range(120)]
    answer = "\n".join(lines)
    assert len(answer) > 10_000
    anthropic_api.script = [text(answer)]
    telegram_api.push_message("long please", user=1001)
    await until(
        lambda: "00119" in "".join(m["text"] for m in replies(telegram_api, 1001)), wait_s=20
    )
    got = [m["text"] for m in replies(telegram_api, 1001)]
    assert len(got) == 3 and all(len(t) <= 4096 for t in got)
    received = [line.rstrip() for line in "\n".join(got).split("\n")]
    assert received == [line.rstrip() for line in lines]
    assert telegram_api.refused == []


async def test_a_burst_under_429_loses_nothing_and_keeps_order(
    app: App, telegram_api: FakeTelegram, anthropic_api: FakeAnthropic
) -> None:
    anthropic_api.responder = lambda body: text(
        "re: " + body["messages"][-1]["content"][-1]["text"].split()[-1]
    )
    telegram_api.fail(
        "sendMessage", 429, "Too Many Requests: retry after 1", retry_after=1, times=2
    )
    for i in range(4):  # four turns whose replies queue up behind the 429s
        telegram_api.push_message(f"msg {i}", user=1001)
        await until(lambda i=i: len(anthropic_api.requests) >= i + 1)
        await app.runtime.wait_idle()
    await until(lambda: len(replies(telegram_api, 1001)) == 4, wait_s=20)
    assert [m["text"] for m in replies(telegram_api, 1001)] == [f"re: {i}" for i in range(4)]


async def test_stop_button_while_a_tool_runs(
    db_path: Path, tmp_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    gate, marker = tmp_path / "never", tmp_path / "pids"
    tool = blocking_tool("wait", gate, marker)
    anthropic_api.script = [tools(("wait", {}))]
    app = await start_app(db_path, anthropic_api, telegram_api, agent_tools=["wait"], tools=[tool])
    try:
        telegram_api.push_message("run it", user=1001)
        await wait_for(app.runtime, EventType.TOOL_STARTED)
        await until(lambda: any("reply_markup" in m for m in telegram_api.sent()))
        progress = next(m for m in telegram_api.sent() if "reply_markup" in m)
        assert progress["reply_markup"]["inline_keyboard"][0][0]["callback_data"] == "stop"
        assert telegram_api.sent("sendChatAction"), "typing while the turn runs"
        telegram_api.push_callback(
            "stop",
            user=1001,
            message={
                "message_id": 4242,
                "date": 0,
                "chat": {"id": 1001, "type": "private"},
                "from": {"id": telegram_api.bot_id, "is_bot": True, "first_name": "Switchboard"},
                "text": "\u23f3",
            },
        )
        await until(lambda: any(m["text"] == "Stopped." for m in telegram_api.sent()))
        finished = await wait_for(app.runtime, EventType.TOOL_FINISHED)
        assert finished.data.status == "cancelled"
        assert telegram_api.sent("answerCallbackQuery")
    finally:
        await app.stop()


async def test_webhook_refuses_a_wrong_secret(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    app = await start_app(
        db_path,
        anthropic_api,
        telegram_api,
        webhook_secret="s3cret",
        public_url="https://bot.example.com",
    )
    [registered] = telegram_api.sent("setWebhook")
    assert registered == {"url": "https://bot.example.com/telegram/acme", "secret_token": "s3cret"}
    assert not telegram_api.sent("getUpdates"), "no polling in webhook mode"
    update = {
        "update_id": 77,
        "message": {
            "message_id": 9,
            "date": 0,
            "text": "via webhook",
            "chat": {"id": 1001, "type": "private"},
            "from": {"id": 1001, "is_bot": False, "first_name": "Alice"},
        },
    }
    url = f"http://127.0.0.1:{app.port}/telegram/acme"
    try:
        async with aiohttp.ClientSession() as http:
            async with http.post(
                url, json=update, headers={"X-Telegram-Bot-Api-Secret-Token": "wrong"}
            ) as response:
                assert response.status == 403
            assert await app.runtime.store.messages() == []
            async with http.post(
                url, json=update, headers={"X-Telegram-Bot-Api-Secret-Token": "s3cret"}
            ) as response:
                assert response.status == 200
        await drained(app)
        [message] = await app.runtime.store.messages()
        assert message.message.text == "via webhook"
        await until(lambda: bool(replies(telegram_api, 1001)))
    finally:
        await app.stop()


async def test_blocked_bot_marks_the_route_failed_and_status_says_so(
    app: App, telegram_api: FakeTelegram, anthropic_api: FakeAnthropic
) -> None:
    telegram_api.fail("sendMessage", 403, "Forbidden: bot was blocked by the user", times=10)
    # A name anyone may give themselves, with what would act in the admin's terminal.
    sender = {"from": {"id": 1001, "is_bot": False, "first_name": "user\x1b1001\u202e\x07"}}
    telegram_api.push_message("hi", user=1001, **sender)
    await until(lambda: "acme" in str(app.bridge.outbox.failed_routes))
    telegram_api.failures.clear()  # the operator unblocks the bot
    anthropic_api.script = [text("fine")]
    telegram_api.push_message("/status", user=1001, **sender)  # writing again clears the mark
    await until(
        lambda: any(
            "Cannot deliver" in m["text"] or "idle" in m["text"] for m in telegram_api.sent()
        )
    )
    status = next(m["text"] for m in telegram_api.sent() if "Undelivered" in m["text"])
    assert "Cannot deliver" not in status, "the operator wrote again: the route works"
    assert await app.bridge.store.failed_routes() == []
    events = [e.data for e in await app.runtime.store.events_after(0) if e.type == "route_failed"]
    assert events and "403" in str(events[0].model_dump()["reason"])
    _, out = await run_to_end("status", "--config", app.path)  # the admin asks, in words
    assert f"Switchboard is running: process {os.getpid()} " in out, out
    assert "  Failed: the answer to Telegram, DM with user1001: Telegram 403" in out, out
    assert not any(c in out for c in "\x1b\x07\u202e"), "a name's control characters shown"
    [counts] = [line for line in out.splitlines() if line.startswith("Deliveries: ")]
    assert "1 could not be delivered" in counts and "accepted_by_transport" not in counts


async def test_stickers_get_a_clear_reply_and_refused_entities_fall_back_to_plain(
    app: App, telegram_api: FakeTelegram, anthropic_api: FakeAnthropic
) -> None:
    telegram_api.push_message(None, user=1001, sticker=True)
    await until(lambda: bool(replies(telegram_api, 1001)))
    assert replies(telegram_api, 1001)[0]["text"] == (
        "I can only read text messages; your sticker was not passed to the agent."
    )
    anthropic_api.script = [text("a **b** c")]
    telegram_api.fail(
        "sendMessage",
        400,
        "Bad Request: can't parse entities: Unsupported tag",
        times=100,  # every HTML message: on a slow machine the turn's progress message is one
        when=lambda params: params.get("parse_mode") == "HTML",
    )
    telegram_api.push_message("go", user=1001)
    await until(lambda: len(replies(telegram_api, 1001)) == 2)
    plain = replies(telegram_api, 1001)[1]
    assert plain["text"] == "a b c" and "parse_mode" not in plain


async def test_an_interjection_while_a_tool_runs(
    db_path: Path, tmp_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    gate, marker = tmp_path / "gate", tmp_path / "pids"
    tool = blocking_tool("wait", gate, marker)
    anthropic_api.script = [tools(("wait", {})), text("done, and noted")]
    app = await start_app(db_path, anthropic_api, telegram_api, agent_tools=["wait"], tools=[tool])
    try:
        telegram_api.push_message("deploy", user=1001)
        await wait_for(app.runtime, EventType.TOOL_STARTED)
        telegram_api.push_message("use the blue cluster", user=1001)
        await wait_for(
            app.runtime,
            EventType.MESSAGE_QUEUED,
            lambda e: e.data.status == "waiting_for_safe_point",
        )
        gate.touch()
        await until(
            lambda: any(m["text"] == "done, and noted" for m in replies(telegram_api, 1001))
        )
        admitted = await wait_for(app.runtime, EventType.OPERATOR_INTERJECTION_ADMITTED)
        assert admitted.data.boundary == "after_tool_results"
        last = anthropic_api.requests[-1]["messages"][-1]["content"]
        assert [b["type"] for b in last] == ["tool_result", "text"]
        assert "use the blue cluster" in last[1]["text"] and "via telegram" in last[1]["text"]
    finally:
        await app.stop()


async def test_two_bots_in_one_process_stay_apart(
    db_path: Path,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    aiohttp_server: Callable[..., Awaitable[AiohttpServer]],
) -> None:
    other = FakeTelegram(token="654321:OTHER", bot_id=654321)
    server = await aiohttp_server(other.app(), host="127.0.0.1")
    other.url = str(server.make_url("")).rstrip("/")
    bob = {"id": "bob", "primary": True, "telegram_user_id": 2002}
    beta = workspace(
        "beta", [bob], telegram={"bot_token": other.token, "api_base_url": other.base_url}
    )
    anthropic_api.responder = lambda body: text("reply")
    app = await start_app(db_path, anthropic_api, telegram_api, more_workspaces=[beta])
    try:
        telegram_api.push_message("for acme", user=1001)
        other.push_message("for beta", user=2002)
        other.push_message("alice tries beta", user=1001)
        await until(
            lambda: bool(
                replies(telegram_api, 1001) and replies(other, 2002) and replies(other, 1001)
            )
        )
        assert [m["chat_id"] for m in replies(telegram_api, 1001)] == [1001]
        assert [m["text"] for m in replies(other, 2002)] == ["reply"]
        assert replies(other, 1001)[0]["text"].startswith("You are not an operator"), (
            "an operator of one workspace cannot drive another's agent"
        )
        agents = {m.session_id: m.message.text for m in await app.runtime.store.messages()}
        assert sorted(agents.values()) == ["for acme", "for beta"]
    finally:
        await app.stop()


async def test_a_wrong_token_is_a_clear_error(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    telegram_api.token = "999:WRONG"  # the bot's token no longer matches
    with pytest.raises(ConfigError) as caught:
        await start_app(db_path, anthropic_api, FakeTelegram(url=telegram_api.url))
    assert "workspace acme: Telegram at" in str(caught.value)
    assert "Check telegram.bot_token" in str(caught.value)
    store = await Store.open(db_path)  # the failed start let go of the database
    await store.close()


async def test_a_polled_update_the_store_fails_to_take_is_tried_again_in_order(
    app: App, telegram_api: FakeTelegram, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Polling confirms an update to Telegram when it is fetched: one the store cannot take
    is not lost, but tried again, and the updates after it wait their turn."""
    store_receive = app.bridge.receive
    refused: list[str | None] = []

    async def disk_trouble(chat: Any) -> None:
        if len(refused) < 2:
            refused.append(chat.text)
            raise OSError("disk I/O error")
        await store_receive(chat)

    monkeypatch.setattr(app.bridge, "receive", disk_trouble)
    telegram_api.push_message("first", user=1001)
    telegram_api.push_message("second", user=1001)
    stored: list[str | None] = []

    async def texts() -> list[str | None]:
        return [m.message.text for m in await app.runtime.store.messages()]

    for _ in range(200):
        stored = await texts()
        if len(stored) == 2:
            break
        await asyncio.sleep(0.05)
    assert refused == ["first", "first"]
    assert stored == ["first", "second"]
