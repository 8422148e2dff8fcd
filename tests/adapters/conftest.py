"""Fixtures for the adapter tests."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest
from pytest_aiohttp import AiohttpServer

from tests.adapters.fast_pacing import faster_slack, faster_telegram
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram


@pytest.fixture
async def telegram_api(
    aiohttp_server: Callable[..., Awaitable[AiohttpServer]],
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
) -> FakeTelegram:
    """The fake Bot API; a chat's second shortened in it and in every App the test starts
    (`tests/adapters/fast_pacing.py`) unless the test is marked `real_pacing`."""
    fake = FakeTelegram()
    server = await aiohttp_server(fake.app(), host="127.0.0.1")
    fake.url = str(server.make_url("")).rstrip("/")
    if request.node.get_closest_marker("real_pacing") is None:
        faster_telegram(monkeypatch, fake)
    return fake


@pytest.fixture
async def slack_api(
    aiohttp_server: Callable[..., Awaitable[AiohttpServer]],
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
) -> FakeSlack:
    """The fake Web API; a channel's second shortened as Telegram's is, unless the test is
    marked `real_pacing`."""
    fake = FakeSlack()
    server = await aiohttp_server(fake.app(), host="127.0.0.1")
    fake.url = str(server.make_url("")).rstrip("/")
    fake.add_team("T1")
    fake.add_team("T2")
    if request.node.get_closest_marker("real_pacing") is None:
        faster_slack(monkeypatch, fake)
    return fake
