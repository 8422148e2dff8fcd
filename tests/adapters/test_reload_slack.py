"""A reload restarting a Slack workspace: an event that comes while its bot does not run is
answered 503 (Slack sends it again) instead of being acknowledged and lost; a Socket Mode
connection that fails is that workspace's reported failure, and does not hold the reload; a
file being described when the restart comes reaches the model once the bot runs again."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from adapters.server.app import App
from tests.adapters.slack_harness import ACME_SECRET, ALICE, SlackSide, start_app
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.slack_api import FakeSlack
from tests.runtime.helpers import until
from tests.topology import drained

CHANNELS = 'channels = ["COPS"]'
MORE_CHANNELS = 'channels = ["COPS", "CNEW"]'


@pytest.fixture
async def app(
    db_path: Path, anthropic_api: FakeAnthropic, slack_api: FakeSlack
) -> AsyncIterator[App]:
    app = await start_app(db_path, anthropic_api, slack_api, slack_extra={"request_timeout_s": 2})
    app.path = db_path.parent / "switchboard.toml"  # the file the harness wrote: reloadable
    yield app
    await app.stop()


def edit(app: App, old: str, new: str) -> None:
    assert app.path is not None
    source = app.path.read_text()
    assert old in source
    app.path.write_text(source.replace(old, new, 1))


async def test_an_event_during_the_restart_is_stored_and_taken_once_the_bot_runs(
    app: App, slack_api: FakeSlack
) -> None:
    slack = SlackSide(app, slack_api)
    started = slack_api.gate("auth.test")  # the restarted bot's start takes a while
    edit(app, CHANNELS, MORE_CHANNELS)
    reloading = asyncio.create_task(app.reload())
    await until(lambda: len(slack_api.method_calls("auth.test")) == 2)
    body = slack.envelope("T1", slack.message("while it restarts"))
    answer = await slack.post(body)
    assert answer.status == 200, "stored: Slack need not send it again"
    await asyncio.sleep(0.3)  # the replay finds no bot running, and waits for it
    assert await app.runtime.store.messages() == []
    started.set()
    assert (await reloading).changed == ("acme",)
    await until(lambda: bool(slack_api.posts("DALICE")), 5)
    [message] = await app.runtime.store.messages()
    assert message.message.text == "while it restarts"


async def test_a_socket_mode_connection_that_fails_is_that_workspaces_failure(
    app: App, slack_api: FakeSlack
) -> None:
    slack = SlackSide(app, slack_api)
    secret = f'signing_secret = "{ACME_SECRET}"'
    edit(app, secret, f'{secret}\napp_token = "xapp-1-A0-NOT-ISSUED"')
    async with asyncio.timeout(30):  # slack_sdk alone would try to connect forever
        report = await app.reload()
    assert report.ok and report.changed == ("acme",)
    assert "Socket Mode did not connect within 4 s" in report.errors
    assert "xapp-1-A0-NOT-ISSUED" not in report.errors
    answer = await slack.post(slack.envelope("T1", slack.message("anyone?")))
    assert answer.status == 200, "configured, not running: stored until it runs again"

    edit(app, '\napp_token = "xapp-1-A0-NOT-ISSUED"', "")
    report = await app.reload()
    assert report.ok and report.errors == "", "released: it restarts again"
    await slack.say("back again")
    await until(lambda: bool(slack_api.posts("DALICE")), 5)
    await drained(app)
    assert [m.message.text for m in await app.runtime.store.messages()] == [
        "anyone?",
        "back again",
    ], "what came while its bot was down was kept, and taken first"


async def test_a_file_described_when_the_restart_comes_reaches_the_model(
    app: App, slack_api: FakeSlack, anthropic_api: FakeAnthropic
) -> None:
    slack = SlackSide(app, slack_api)
    full = slack_api.files.add("T1", ALICE, "config.yaml", "text/plain", b"replicas: 3\n", "yaml")
    partial = {"id": full["id"], "mode": "hosted", "file_access": "check_file_info"}
    described = slack_api.gate("files.info")
    started = slack_api.gate("auth.test")
    await slack.say("check it", subtype="file_share", files=[partial])
    await until(lambda: len(slack_api.method_calls("files.info")) == 1)
    edit(app, CHANNELS, MORE_CHANNELS)
    reloading = asyncio.create_task(app.reload())  # its stop cuts the description short
    await until(lambda: len(slack_api.method_calls("auth.test")) == 2)
    started.set()
    assert (await reloading).changed == ("acme",)
    described.set()
    await until(lambda: bool(slack_api.posts("DALICE")))
    blocks = anthropic_api.requests[0]["messages"][0]["content"]
    assert "replicas: 3" in blocks[0]["text"] and blocks[-1]["text"] == "check it"
