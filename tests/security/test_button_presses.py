"""A Telegram button press is stored like any update, then handled; answering it
(`answerCallbackQuery`, which only stops the client's spinner) is best effort. When Telegram
refuses the answer ("query is too old"), the press still takes effect, once; the webhook gets
its 200 (a 500 would have Telegram send the stale press again); and nothing else waits on it:
a message to another workspace's bot right after is handled at once, not after retries."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from pytest_aiohttp import AiohttpServer

from bridge import texts
from tests.adapters.telegram_harness import ALICE, start_app
from tests.config_file import workspace
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until
from tests.topology import Topology

SECRET = "s3cret"
OPERATOR = 1001
TOO_OLD = "Bad Request: query is too old and response timeout expired or query ID is invalid"
PROMPTLY_S = 4.0  # a stored press retried would hold other work up for 15 s and more


@pytest.fixture
async def other_bot(aiohttp_server: Callable[..., Awaitable[AiohttpServer]]) -> FakeTelegram:
    """The bot of a second workspace, `beta`."""
    fake = FakeTelegram(token="654321:OTHER", bot_id=654321)
    server = await aiohttp_server(fake.app(), host="127.0.0.1")
    fake.url = str(server.make_url("")).rstrip("/")
    return fake


def stop_press(update_id: int) -> dict[str, Any]:
    """The operator presses Stop on a progress message in their DM."""
    return {
        "update_id": update_id,
        "callback_query": {
            "id": f"cb{update_id}",
            "chat_instance": "ci",
            "data": "stop",
            "from": {"id": OPERATOR, "is_bot": False, "first_name": "Alice"},
            "message": {
                "message_id": 50,
                "date": int(time.time()),
                "chat": {"id": OPERATOR, "type": "private"},
                "from": {"id": 123456, "is_bot": True, "first_name": "Switchboard"},
                "text": "\u23f3 thinking",
            },
        },
    }


def dm(update_id: int, words: str) -> dict[str, Any]:
    return {
        "update_id": update_id,
        "message": {
            "message_id": update_id,
            "date": int(time.time()),
            "text": words,
            "chat": {"id": OPERATOR, "type": "private"},
            "from": {"id": OPERATOR, "is_bot": False, "first_name": "Alice"},
        },
    }


async def post(http: aiohttp.ClientSession, port: int, ws: str, update: dict[str, Any]) -> int:
    url = f"http://127.0.0.1:{port}/telegram/{ws}"
    headers = {"X-Telegram-Bot-Api-Secret-Token": SECRET}
    async with http.post(url, json=update, headers=headers) as response:
        return response.status


def not_answered(records: list[logging.LogRecord]) -> list[logging.LogRecord]:
    return [r for r in records if r.getMessage() == "telegram button press not answered"]


async def test_a_press_whose_answer_fails_takes_effect_and_holds_nothing_up(
    topology: Topology,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    other_bot: FakeTelegram,
    caplog: pytest.LogCaptureFixture,
) -> None:
    beta_bot = {
        "bot_token": other_bot.token,
        "api_base_url": other_bot.base_url,
        "mode": "webhook",
        "webhook_secret": SECRET,
    }
    app = await start_app(
        Path("unused"),
        anthropic_api,
        telegram_api,
        webhook_secret=SECRET,
        more_workspaces=[workspace("beta", [ALICE], telegram=beta_bot)],
        topology=topology,
    )
    telegram_api.fail("answerCallbackQuery", 400, TOO_OLD, times=10)
    caplog.set_level(logging.WARNING)
    async with aiohttp.ClientSession() as http:
        assert await post(http, app.port, "acme", stop_press(901)) == 200
        assert await post(http, app.port, "beta", dm(902, "/status")) == 200
        await until(lambda: bool(other_bot.chat(OPERATOR)), wait_s=PROMPTLY_S)
    await until(lambda: texts.NOTHING_TO_STOP in telegram_api.chat(OPERATOR))
    await until(lambda: bool(not_answered(caplog.records)))
    [line] = not_answered(caplog.records)
    assert getattr(line, "workspace", None) == "acme" and "too old" in getattr(line, "error", "")
    await topology.active.bridge.settle()
    assert telegram_api.chat(OPERATOR) == [texts.NOTHING_TO_STOP], "handled once, not retried"
    assert len(telegram_api.failures["answerCallbackQuery"]) == 9, "answered once, not again"


async def test_a_polled_press_whose_answer_fails_takes_effect(
    db_path: Path,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    caplog: pytest.LogCaptureFixture,
) -> None:
    app = await start_app(db_path, anthropic_api, telegram_api)
    try:
        telegram_api.fail("answerCallbackQuery", 400, TOO_OLD, times=10)
        caplog.set_level(logging.WARNING)
        message = stop_press(0)["callback_query"]["message"]
        telegram_api.push_callback("stop", user=OPERATOR, message=message)
        await until(lambda: texts.NOTHING_TO_STOP in telegram_api.chat(OPERATOR))
        await until(lambda: bool(not_answered(caplog.records)))
    finally:
        await app.stop()
