"""A press runs what the operator saw on the button, on Slack, while its message is updated in
place with other buttons and after: Pause on a `/schedules` list turns that message into one
with Resume where Pause was (`chat.update`). Each button's value names the rendering it is
on (its delivery), so Resume pressed before the update's answer is back resumes, and Pause
pressed on a client still showing the old list pauses. A value naming another channel's list
is refused. Signed `block_actions` presses into the real App, the fake Web API behind it."""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from adapters.server.app import App
from tests.adapters.slack.test_slack_schedule_buttons import DM, QUEUE_CHECK, buttons, shown
from tests.adapters.slack.test_slack_schedule_list_rewritten import now_of
from tests.adapters.slack_harness import ALICE, OPS, SlackSide, start_app
from tests.fakes.anthropic_api import FakeAnthropic, text
from tests.fakes.slack_api import FakeSlack
from tests.runtime.helpers import until

PAUSE = RESUME = "switchboard_command_0"  # the first button, before and after the update
STALL_S = 3.0  # the update's answer this late: its record lands after the press is read
GONE = "That button no longer works"


@pytest.fixture
async def app(
    db_path: Path, anthropic_api: FakeAnthropic, slack_api: FakeSlack
) -> AsyncIterator[App]:
    anthropic_api.responder = lambda body: text("Queue checked: nothing stuck.")
    app = await start_app(
        db_path,
        anthropic_api,
        slack_api,
        acme_extra={"schedules": [QUEUE_CHECK]},
        slack_extra={"request_timeout_s": 2 * STALL_S},  # the stalled update is not retried
    )
    yield app
    await app.stop()


async def paused_by(app: App) -> str | None:
    [view] = await app.bridge.automations.schedules("acme")
    return view.paused_by


class Side:
    """alice's side of Slack: what she asks for, presses and reads."""

    def __init__(self, app: App, slack: FakeSlack) -> None:
        self.slack = slack
        self.side = SlackSide(app, slack)
        acme = next(t for t in slack.teams.values() if t.team_id == "T1")
        self.mention = f"<@{acme.bot_user_id}>"

    def said(self, channel: str = DM) -> list[str]:
        return [str(m["text"]) for m in self.slack.messages.get(channel, []) if m["bot"]]

    async def listing(self, channel: str = DM) -> dict[str, Any]:
        before = len(self.said(channel))
        await self.side.say(f"{self.mention} /schedules", channel=channel)
        await until(lambda: len(self.said(channel)) > before, wait_s=20)
        [listing] = [
            m for m in self.slack.messages[channel] if m["bot"] and "Schedules:" in str(m["text"])
        ]
        return listing

    async def reply_to_press(self, message: dict[str, Any], action: str) -> str:
        """alice presses the button `action` of `message` (as her client shows it, its value
        with it); the bot's next message in her DM."""
        before = len(self.said())
        assert (await self.side.click(message, DM, action, user=ALICE)).status == 200
        await until(lambda: len(self.said()) > before, wait_s=20)
        return self.said()[before]


async def test_resume_pressed_before_the_update_is_answered_resumes(
    app: App, slack_api: FakeSlack
) -> None:
    alice = Side(app, slack_api)
    listing = await alice.listing()
    slack_api.fail(
        "chat.update", 200, stall_s=STALL_S, when=lambda args: "paused by" in str(args["text"])
    )
    assert (await alice.side.click(listing, DM, PAUSE, user=ALICE)).status == 200
    await until(lambda: "paused by alice" in str(now_of(slack_api, listing)["text"]), wait_s=20)
    updated = now_of(slack_api, listing)
    assert buttons(updated)[0][0] == (RESUME, "Resume queue-check")
    # The update's answer stalls: the bot has not recorded it, nor said "is paused".
    assert not shown(slack_api, "is paused")

    said = await alice.reply_to_press(updated, RESUME)
    assert said.startswith("Schedule queue-check is paused"), said  # the first press's
    await until(lambda: bool(shown(slack_api, "Schedule queue-check runs again")), wait_s=20)
    assert await paused_by(app) is None, "Resume paused the schedule again"
    assert len(shown(slack_api, "is paused")) == 1


async def test_pause_pressed_on_the_list_before_its_update_pauses(
    app: App, slack_api: FakeSlack
) -> None:
    """The operator presses the Pause they see, on a client that has not redrawn the list
    since another press turned it into Resume: it pauses (as they asked), and does not
    resume (what the message shows now)."""
    alice = Side(app, slack_api)
    listing = await alice.listing()
    seen = copy.deepcopy(listing)  # as her client shows it: the fake updates `listing`
    said = await alice.reply_to_press(listing, PAUSE)
    assert said.startswith("Schedule queue-check is paused"), said
    assert buttons(now_of(slack_api, listing))[0][0] == (RESUME, "Resume queue-check")

    said = await alice.reply_to_press(seen, PAUSE)  # recorded: the reply came after it
    assert said.startswith("Schedule queue-check is paused"), said
    assert await paused_by(app) == "alice"
    await app.bridge.settle()
    assert not shown(slack_api, "runs again")


async def test_a_press_naming_another_channels_list_does_nothing(
    app: App, slack_api: FakeSlack
) -> None:
    """A hostile client puts the value of the #ops list's Pause on a press of the list in
    alice's DM: the button no longer works, and nothing is paused."""
    alice = Side(app, slack_api)
    mine = await alice.listing()
    theirs = await alice.listing(OPS)
    forged = {**mine, "blocks": theirs["blocks"]}  # the value comes from the blocks pressed

    said = await alice.reply_to_press(forged, PAUSE)
    assert said.startswith(GONE), said
    await app.bridge.settle()
    assert await paused_by(app) is None, "a press naming #ops's list paused"


async def test_a_button_posted_before_presses_named_their_delivery_still_works(
    app: App, slack_api: FakeSlack
) -> None:
    """Lists an older Switchboard posted are still in channels, each button's value its place
    alone: such a press runs the button at that place of the message as recorded now."""
    alice = Side(app, slack_api)
    listing = await alice.listing()
    await app.bridge.settle()  # recorded as posted, long ago
    old = copy.deepcopy(listing)
    for block in old["blocks"]:
        for element in block.get("elements") or []:
            element["value"] = element["action_id"].rpartition("_")[2]

    said = await alice.reply_to_press(old, PAUSE)
    assert said.startswith("Schedule queue-check is paused"), said
    assert await paused_by(app) == "alice"
