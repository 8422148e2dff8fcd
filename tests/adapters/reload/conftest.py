"""The reload tests' App: two Telegram workspaces, acme (alice, 1001) on the `telegram_api`
bot, beta (bob, 2002) on a bot of its own."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from pytest_aiohttp import AiohttpServer

from adapters.server.app import App
from tests.adapters.telegram_harness import start_app
from tests.config_file import workspace
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.telegram_api import FakeTelegram


@pytest.fixture
async def beta_api(
    aiohttp_server: Callable[..., Awaitable[AiohttpServer]],
) -> FakeTelegram:
    other = FakeTelegram(token="654321:OTHER", bot_id=654321)
    server = await aiohttp_server(other.app(), host="127.0.0.1")
    other.url = str(server.make_url("")).rstrip("/")
    return other


@pytest.fixture
async def app(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram, beta_api: FakeTelegram
) -> AsyncIterator[App]:
    """acme (alice, 1001) on one bot, beta (bob, 2002) on another."""
    bob = {"id": "bob", "primary": True, "telegram_user_id": 2002}
    beta = workspace(
        "beta", [bob], telegram={"bot_token": beta_api.token, "api_base_url": beta_api.base_url}
    )
    app = await start_app(db_path, anthropic_api, telegram_api, more_workspaces=[beta])
    yield app
    await app.stop()
