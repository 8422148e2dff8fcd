"""The Slack tests' app: the whole process against the fake Web API, and the Slack side that
signs and posts events to it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from adapters.server.app import App
from tests.adapters.slack_harness import SlackSide, start_app
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.slack_api import FakeSlack


@pytest.fixture
async def app(
    db_path: Path, anthropic_api: FakeAnthropic, slack_api: FakeSlack
) -> AsyncIterator[App]:
    app = await start_app(db_path, anthropic_api, slack_api)
    yield app
    await app.stop()


@pytest.fixture
def slack(app: App, slack_api: FakeSlack) -> SlackSide:
    return SlackSide(app, slack_api)
