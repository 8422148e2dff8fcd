"""Buttons under /schedules in Slack (issue 31): Block Kit buttons, a row (an actions block)
per schedule, each naming its place; a signed `block_actions` press runs the sub-command it
stands for as the operator who pressed it, and a stranger's press changes nothing. The fake
Web API refuses blocks Slack would (a label over 75 characters, a value over 2,000, an action
id twice in a block)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from adapters.server.app import App
from bridge.events import BridgeEventType
from tests.adapters.slack_harness import ALICE, MALLORY, SlackSide, start_app
from tests.fakes.anthropic_api import FakeAnthropic, text
from tests.fakes.slack_api import FakeSlack
from tests.runtime.helpers import until, wait_for

DM = "DALICE"
QUEUE_CHECK = {"id": "queue-check", "agent": "assistant", "every": "1h", "prompt": "Check it."}


@pytest.fixture
async def app(
    db_path: Path, anthropic_api: FakeAnthropic, slack_api: FakeSlack
) -> AsyncIterator[App]:
    anthropic_api.responder = lambda body: text("Queue checked: nothing stuck.")
    app = await start_app(
        db_path, anthropic_api, slack_api, acme_extra={"schedules": [QUEUE_CHECK]}
    )
    yield app
    await app.stop()


def shown(slack: FakeSlack, words: str) -> list[dict[str, Any]]:
    return [m for m in slack.messages.get(DM, []) if m["bot"] and words in str(m["text"])]


def buttons(message: dict[str, Any]) -> list[list[tuple[str, str]]]:
    """The buttons under a message, an actions block a row: (action id, label)."""
    return [
        [(e["action_id"], e["text"]["text"]) for e in block["elements"]]
        for block in message["blocks"]
        if block["type"] == "actions"
    ]


async def test_the_buttons_under_schedules_pause_and_run_a_schedule(
    app: App, slack_api: FakeSlack, anthropic_api: FakeAnthropic
) -> None:
    slack = SlackSide(app, slack_api)
    acme = next(t for t in slack_api.teams.values() if t.team_id == "T1")
    mention = f"<@{acme.bot_user_id}>"  # Slack's client takes a leading / as its own command

    async def listing() -> dict[str, Any]:
        before = len(shown(slack_api, "Schedules:"))
        await slack.say(f"{mention} /schedules", channel=DM)
        await until(lambda: len(shown(slack_api, "Schedules:")) > before, wait_s=20)
        return shown(slack_api, "Schedules:")[-1]

    async def press(message: dict[str, Any], action: str, reply: str) -> None:
        before = len(shown(slack_api, reply))
        assert (await slack.click(message, DM, action, user=ALICE)).status == 200
        await until(lambda: len(shown(slack_api, reply)) > before, wait_s=20)

    posted = await listing()
    assert posted["blocks"][0]["type"] == "section"
    assert "queue-check (every 1h, agent assistant)" in posted["blocks"][0]["text"]["text"]
    assert buttons(posted) == [
        [
            ("switchboard_command_0", "Pause queue-check"),
            ("switchboard_command_1", "Run queue-check now"),
        ]
    ]

    answer = await slack.click(posted, DM, "switchboard_command_0", user=MALLORY)
    assert answer.status == 200
    refused = await wait_for(app.runtime, BridgeEventType.INBOUND_REFUSED)
    assert refused.data.sender_id == MALLORY
    [view] = await app.bridge.automations.schedules("acme")
    assert view.paused_by is None, "a stranger's press paused the schedule"

    await press(posted, "switchboard_command_0", "Schedule queue-check is paused")
    [view] = await app.bridge.automations.schedules("acme")
    assert view.paused_by == "alice"
    again = await listing()
    assert buttons(again)[0][0] == ("switchboard_command_0", "Resume queue-check")

    await press(again, "switchboard_command_1", "Schedule queue-check runs now")
    await until(lambda: bool(shown(slack_api, "Queue checked: nothing stuck.")), wait_s=20)
