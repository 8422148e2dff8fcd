"""What a reload's restart holds, on Telegram: replies wait for the workspace's bot (and for a
bot that did not start, until a reload fixes it) without spending their attempts; a webhook
update that comes meanwhile is answered 503, so that Telegram sends it again; a stop waits for
a reload under way and refuses any after it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp

from adapters.server.app import App
from bridge.store.records import Intent
from bridge.types import DeliveryStatus
from tests.adapters.reload.harness import CAROL, edit
from tests.adapters.telegram_harness import replies, start_app
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until

AGENTS = "[[workspaces.agents]]"  # acme's first: an operator added before it changes acme


async def reply_of(app: App, workspace_id: str) -> Intent | None:
    intents = await app.bridge.store.intents()
    return next((i for i in intents if i.route.workspace_id == workspace_id), None)


async def until_reply(app: App, workspace_id: str, holds: Callable[[Intent], bool]) -> Intent:
    for _ in range(2000):
        intent = await reply_of(app, workspace_id)
        if intent is not None and holds(intent):
            return intent
        await asyncio.sleep(0.005)
    raise AssertionError(f"the reply never got there: {await reply_of(app, workspace_id)}")


def no_button(params: dict[str, Any]) -> bool:
    """The reply, not the progress message with its Stop button."""
    return "reply_markup" not in params


def waiting(intent: Intent) -> bool:
    return intent.status in (DeliveryStatus.PENDING, DeliveryStatus.SENDING)


async def test_a_reply_pending_while_its_bot_fails_to_start_goes_once_a_reload_fixes_it(
    app: App, beta_api: FakeTelegram
) -> None:
    beta_api.fail("sendMessage", 502, "Bad Gateway", when=no_button)  # tried again later
    beta_api.push_message("hi", user=2002)
    await until_reply(app, "beta", lambda i: i.attempts == 1 and waiting(i))
    edit(app, beta_api.token, "654321:WRONG")
    report = await app.reload()
    assert report.ok and "workspace beta: Telegram at" in report.errors

    intent = await until_reply(app, "beta", lambda i: "not running" in (i.last_error or ""))
    assert waiting(intent) and intent.attempts == 1, "kept, and the wait spent no attempt"
    edit(app, "654321:WRONG", beta_api.token)
    report = await app.reload()
    assert report.ok and report.errors == ""
    await until(lambda: bool(replies(beta_api, 2002)))
    intent = await until_reply(app, "beta", lambda i: not waiting(i))
    assert intent.status is DeliveryStatus.ACCEPTED_BY_TRANSPORT


async def test_a_webhook_update_during_the_restart_is_stored_and_taken_once_the_bot_runs(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    app = await start_app(
        db_path, anthropic_api, telegram_api, webhook_secret="s3cret", public_url="https://x.io"
    )
    update = {
        "update_id": 78,
        "message": {
            "message_id": 9,
            "date": 0,
            "text": "while it restarts",
            "chat": {"id": 1001, "type": "private"},
            "from": {"id": 1001, "is_bot": False, "first_name": "Alice"},
        },
    }
    url, secret = (
        f"http://127.0.0.1:{app.port}/telegram/acme",
        {"X-Telegram-Bot-Api-Secret-Token": "s3cret"},
    )
    try:
        started = telegram_api.gate("getMe")  # the restarted bot's start hangs a while
        edit(app, AGENTS, CAROL + AGENTS)
        reloading = asyncio.create_task(app.reload())
        await until(lambda: len(telegram_api.sent("getMe")) == 2)
        async with (
            aiohttp.ClientSession() as http,
            http.post(url, json=update, headers=secret) as response,
        ):
            assert response.status == 200, "stored: Telegram need not send it again"
        await asyncio.sleep(0.3)  # the replay finds no bot running, and waits for it
        assert await app.runtime.store.messages() == []
        started.set()
        assert (await reloading).changed == ("acme",)
        await until(lambda: bool(replies(telegram_api, 1001)), 5)
        [message] = await app.runtime.store.messages()
        assert message.message.text == "while it restarts"
    finally:
        await app.stop()


async def test_stop_waits_for_a_reload_under_way_and_refuses_any_after(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    app = await start_app(db_path, anthropic_api, telegram_api)
    started = telegram_api.gate("getMe")
    edit(app, AGENTS, CAROL + AGENTS)
    reloading = asyncio.create_task(app.reload())
    await until(lambda: len(telegram_api.sent("getMe")) == 2)
    stopping = asyncio.create_task(app.stop())  # SIGTERM while the reload starts acme's bot
    await asyncio.wait({stopping}, timeout=0.5)  # a stop that did not wait would be done
    started.set()
    assert (await reloading).changed == ("acme",)
    await stopping
    bot = app.live.bots("telegram")["acme"]
    assert not bot.application.running, "no bot runs after the stop"
    late = await app.reload()
    assert not late.ok and "stopping" in late.errors
