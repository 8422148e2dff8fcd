"""A pressed `/schedules` list shows its new state where it was pressed, on Slack (issue 43):
the signed `block_actions` press of its Pause updates that message (`chat.update`, checked
by the fake Web API against Slack's spec) to read "paused by alice" with Resume where Pause
was; its Resume turns it back. The confirmation still comes as a message of its own."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from adapters.server.app import App
from tests.adapters.slack.test_slack_schedule_buttons import DM, QUEUE_CHECK, buttons, shown
from tests.adapters.slack_harness import ALICE, SlackSide, start_app
from tests.fakes.anthropic_api import FakeAnthropic, text
from tests.fakes.slack_api import FakeSlack
from tests.runtime.helpers import until


@pytest.fixture
async def slack_app(
    db_path: Path, anthropic_api: FakeAnthropic, slack_api: FakeSlack
) -> AsyncIterator[App]:
    anthropic_api.responder = lambda body: text("Queue checked: nothing stuck.")
    app = await start_app(
        db_path, anthropic_api, slack_api, acme_extra={"schedules": [QUEUE_CHECK]}
    )
    yield app
    await app.stop()


def now_of(slack: FakeSlack, message: dict[str, Any]) -> dict[str, Any]:
    """The message as the channel shows it now (updates included)."""
    return next(m for m in slack.messages[DM] if m["ts"] == message["ts"])


async def test_a_pressed_schedules_list_updates_itself_on_slack(
    slack_app: App, slack_api: FakeSlack
) -> None:
    slack = SlackSide(slack_app, slack_api)
    acme = next(t for t in slack_api.teams.values() if t.team_id == "T1")
    await slack.say(f"<@{acme.bot_user_id}> /schedules", channel=DM)
    await until(lambda: bool(shown(slack_api, "Schedules:")), wait_s=20)
    [listing] = shown(slack_api, "Schedules:")
    assert buttons(listing)[0][0] == ("switchboard_command_0", "Pause queue-check")

    assert (await slack.click(listing, DM, "switchboard_command_0", user=ALICE)).status == 200
    await until(lambda: bool(shown(slack_api, "Schedule queue-check is paused")), wait_s=20)
    await until(lambda: "paused by alice" in str(now_of(slack_api, listing)["text"]), wait_s=10)
    pressed = now_of(slack_api, listing)
    assert buttons(pressed) == [
        [
            ("switchboard_command_0", "Resume queue-check"),
            ("switchboard_command_1", "Run queue-check now"),
        ]
    ], "the pressed list still offers Pause"
    assert "paused by alice" in pressed["blocks"][0]["text"]["text"]
    assert len(shown(slack_api, "Schedules:")) == 1, "a second list was posted"
    assert any(call[0] == "chat.update" for call in slack_api.calls)

    assert (await slack.click(pressed, DM, "switchboard_command_0", user=ALICE)).status == 200
    await until(lambda: "paused by" not in str(now_of(slack_api, listing)["text"]), wait_s=20)
    assert buttons(now_of(slack_api, listing))[0][0] == (
        "switchboard_command_0",
        "Pause queue-check",
    )
