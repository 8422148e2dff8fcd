"""Fixtures of the hostile-input tests: each door started on the real app, and an HTTP
client to knock with."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from adapters.server.app import App
from tests.adapters import slack_harness, telegram_harness
from tests.adapters.hostile.send import TG_SECRET
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram
from tests.topology import Topology


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


@pytest.fixture(autouse=True)
def _quick_stop(monkeypatch: pytest.MonkeyPatch) -> None:
    """The model's answers to the many checks that the door still works queue up behind the
    platforms' pacing; a test need not wait for them to go out when it stops the app."""
    monkeypatch.setattr("adapters.server.app.DRAIN_S", 0.1)


@pytest.fixture
async def slack_app(
    topology: Topology, db_path: Path, anthropic_api: FakeAnthropic, slack_api: FakeSlack
) -> AsyncIterator[App]:
    """acme on Slack, in each topology (`tests/topology.py`): the App a client knocks on."""
    yield await slack_harness.start_app(db_path, anthropic_api, slack_api, topology=topology)
    await topology.stop()  # while the fakes still answer


@pytest.fixture
async def telegram_app(
    topology: Topology, db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> AsyncIterator[App]:
    """acme on Telegram webhooks, in each topology: the App a client knocks on."""
    yield await telegram_harness.start_app(
        db_path, anthropic_api, telegram_api, webhook_secret=TG_SECRET, topology=topology
    )
    await topology.stop()  # while the fakes still answer
