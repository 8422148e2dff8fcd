"""Socket Mode as a way in (`adapters/slack/socket.py`): an envelope is stored before it is
acknowledged, one that cannot be stored is not (Slack sends it again), and a slash command over
the socket is answered through its response_url."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.adapters.hostile.send import intake_fails
from tests.adapters.slack_harness import ALICE, SlackSide, start_app
from tests.fakes.anthropic_api import FakeAnthropic, text
from tests.fakes.slack_api import FakeSlack
from tests.runtime.helpers import until
from tests.topology import drained


async def test_socket_mode_receives_events_and_acknowledges_them(
    db_path: Path, anthropic_api: FakeAnthropic, slack_api: FakeSlack
) -> None:
    slack_api.teams["xoxb-test-t1"].app_token = "xapp-test-t1"
    anthropic_api.script = [text("over the socket")]
    app = await start_app(
        db_path,
        anthropic_api,
        slack_api,
        app_token="xapp-test-t1",
        signing_secret=None,
    )
    slack = SlackSide(app, slack_api)
    try:
        event = slack.message("hello socket")
        payload = json.loads(slack.envelope("T1", event))
        with pytest.MonkeyPatch.context() as patch:
            intake_fails(patch)
            with pytest.raises(TimeoutError):  # not stored: not acknowledged, Slack resends
                await asyncio.wait_for(slack_api.socket_send("T1", "events_api", payload), 1)
        await drained(app)
        assert await app.runtime.store.messages() == []
        ack = await slack_api.socket_send("T1", "events_api", payload)  # Slack's resend
        assert set(ack) == {"envelope_id"}
        await until(lambda: bool(slack_api.posts("DALICE")))
        assert slack_api.posts("DALICE")[0]["text"] == "over the socket"
        assert slack_api.method_calls("apps.connections.open") == [{}]
        command = {
            "team_id": "T1",
            "channel_id": "DALICE",
            "user_id": ALICE,
            "command": "/switchboard",
            "text": "status",
            "response_url": slack_api.response_url("T1"),
            "trigger_id": "1337.42.socket",
        }
        ack = await slack_api.socket_send("T1", "slash_commands", command)
        assert set(ack) == {"envelope_id"}
        await until(lambda: bool(slack_api.responses))
        assert slack_api.responses[0]["response_type"] == "ephemeral"
        http = await slack.post(slack.envelope("T1", slack.message("over http")))
        assert http.status == 401, "no signing secret: nothing is taken over HTTP"
    finally:
        await app.stop()


async def test_a_dropped_socket_is_said_down_with_why_and_up_again_once_reopened(
    db_path: Path, anthropic_api: FakeAnthropic, slack_api: FakeSlack
) -> None:
    """slack_sdk reopens a dropped Socket Mode connection by itself, silently: the workspace's
    health says it is down meanwhile (as `/status`, `switchboard status` and the console show
    it), and working again once it is open, and messages go through again."""
    slack_api.teams["xoxb-test-t1"].app_token = "xapp-test-t1"
    anthropic_api.script = [text("after the drop")]
    app = await start_app(
        db_path, anthropic_api, slack_api, app_token="xapp-test-t1", signing_secret=None
    )
    [workspace] = app.config.workspaces

    def slack_health() -> str:
        [line] = [h for h in app.bridge.health_of(workspace) if h.subject.startswith("platform")]
        return line.words

    try:
        assert slack_health() == "Slack (socket mode): connected."
        reopen = slack_api.gate("apps.connections.open")  # Slack does not take it back yet
        await slack_api.socket_drop("T1")
        await until(lambda: "is down" in slack_health(), wait_s=20)
        assert "Socket Mode connection to Slack was lost" in slack_health()
        assert "it is tried again by itself" in slack_health()
        reopen.set()
        await until(lambda: slack_health() == "Slack (socket mode): connected.", wait_s=30)
        event = SlackSide(app, slack_api).message("still there?")
        payload = json.loads(SlackSide(app, slack_api).envelope("T1", event))
        await slack_api.socket_send("T1", "events_api", payload)
        await until(lambda: "after the drop" in slack_api.shown("DALICE"), wait_s=20)
    finally:
        await app.stop()
