"""Fixtures for the adapter tests."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest
from pytest_aiohttp import AiohttpServer

from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram


@pytest.fixture
async def telegram_api(
    aiohttp_server: Callable[..., Awaitable[AiohttpServer]],
) -> FakeTelegram:
    fake = FakeTelegram()
    server = await aiohttp_server(fake.app(), host="127.0.0.1")
    fake.url = str(server.make_url("")).rstrip("/")
    return fake


@pytest.fixture
async def slack_api(aiohttp_server: Callable[..., Awaitable[AiohttpServer]]) -> FakeSlack:
    fake = FakeSlack()
    server = await aiohttp_server(fake.app(), host="127.0.0.1")
    fake.url = str(server.make_url("")).rstrip("/")
    fake.add_team("T1")
    fake.add_team("T2")
    return fake
