"""Fixtures for the adapter tests."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest
from pytest_aiohttp import AiohttpServer

from tests.adapters.fast_pacing import faster_telegram
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


@pytest.fixture
def fast_telegram(monkeypatch: pytest.MonkeyPatch, telegram_api: FakeTelegram) -> FakeTelegram:
    """`telegram_api`, with a chat's second shortened in it and in every App the test starts
    (`tests/adapters/fast_pacing.py`): a module of conversation tests asks for it first."""
    faster_telegram(monkeypatch, telegram_api)
    return telegram_api
