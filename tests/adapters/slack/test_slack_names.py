"""Slack conversations named as an admin reads them ("Slack, #ops", "Slack, DM with Alice")
where Switchboard says what each session does (`switchboard status`, `/status`, the admin
console all read `ActivityReader`): Slack's events carry only ids, so the adapter asks the
Web API (`conversations.info`, `users.info`), once per id."""

from __future__ import annotations

import time

from adapters.server.app import App
from bridge.activity import ActivityReader
from tests.adapters.slack_harness import ALICE, OPS, SlackSide
from tests.fakes.anthropic_api import FakeAnthropic, text
from tests.fakes.slack_api import FakeSlack
from tests.runtime.helpers import until


async def places(app: App) -> set[str]:
    """Where each session lives, in the words `switchboard status` prints."""
    reader = ActivityReader(app.runtime.store, app.bridge.store, running=True)
    return {a.where for a in await reader.read(await app.runtime.store.sessions())}


async def test_channel_and_dm_are_named_by_slack_once_each(
    app: App, slack: SlackSide, slack_api: FakeSlack, anthropic_api: FakeAnthropic
) -> None:
    slack_api.directory.people[ALICE] = "Alice"
    anthropic_api.script = [text("one"), text("two"), text("three")]

    top = await slack.say("deploy status?", channel=OPS)
    await until(lambda: len(slack_api.posts(OPS)) == 1)
    await slack.say("hi", channel="DALICE")
    await until(lambda: bool(slack_api.posts("DALICE")))

    assert await places(app) == {"Slack, #ops (a thread)", "Slack, DM with Alice"}

    await slack.say("and staging?", channel=OPS, thread_ts=top)
    await until(lambda: len(slack_api.posts(OPS)) == 2)
    assert len(slack_api.method_calls("conversations.info")) == 1, "the name is remembered"
    assert [c["user"] for c in slack_api.method_calls("users.info")] == [ALICE]


async def test_without_the_scope_the_message_arrives_promptly_named_by_its_id(
    app: App, slack: SlackSide, slack_api: FakeSlack, anthropic_api: FakeAnthropic
) -> None:
    slack_api.fail("conversations.info", 200, error="missing_scope")
    slack_api.gate("users.info")  # Slack never answers who she is
    anthropic_api.script = [text("answered")]

    started = time.monotonic()
    await slack.say("deploy status?", channel=OPS)
    await until(lambda: len(slack_api.posts(OPS)) == 1)

    assert time.monotonic() - started < 3, "a name is not worth waiting for"
    assert slack_api.posts(OPS)[0]["text"] == "answered"
    assert await places(app) == {f"Slack, chat {OPS} (a thread)"}
