"""Slack end to end: slack-bolt behind our aiohttp server receiving correctly signed
requests, `AsyncWebClient` against the loopback fake Web API (checked against the published
spec), the real App, bridge and runtime, the fake Anthropic API."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from adapters.app import App
from tests.adapters.slack_harness import ALICE, SlackSide, start_app
from tests.fakes.anthropic_api import FakeAnthropic, text
from tests.fakes.slack_api import FakeSlack
from tests.runtime.helpers import until


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


async def test_dm_gets_a_reply_with_reactions_and_progress_cleared(
    app: App, slack: SlackSide, slack_api: FakeSlack, anthropic_api: FakeAnthropic
) -> None:
    anthropic_api.script = [text("Hello **Alice** & <co>")]
    ts = await slack.say("hi", channel="DALICE")
    await until(lambda: bool(slack_api.posts("DALICE")))
    [reply] = slack_api.posts("DALICE")
    assert reply["text"] == "Hello *Alice* &amp; &lt;co&gt;"
    assert reply["thread_ts"] is None, "a DM's top level is one session, answered there"
    assert reply["metadata"]["event_payload"]["chunk"] == 0
    await until(lambda: ("add", "DALICE", ts, "white_check_mark") in slack_api.reactions)
    assert ("add", "DALICE", ts, "eyes") in slack_api.reactions
    assert not [m for m in slack_api.messages["DALICE"] if "blocks" in m], "progress cleared"
    assert slack_api.refused == []
    assert anthropic_api.requests[0]["messages"][0]["content"][0]["text"] == "hi"
    assert ALICE
