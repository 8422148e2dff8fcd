"""A press runs what the operator saw on the button, while its message is rewritten in place
with other buttons and after: Pause on a `/schedules` list turns that message into one with
Resume where Pause was. A press names the rendering it was pressed on (its delivery), so
Resume pressed before its rewrite is recorded resumes (it does not pause again, as the
message's record still said), and Pause pressed on a client that still shows the old list
pauses (it does not resume, as the message's record says now). Data naming another chat's
list is refused. Through the real App, python-telegram-bot and the fake Bot API."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from adapters.server.app import App
from tests.adapters.automation.test_schedule_buttons import (
    ALICE,
    QUEUE_CHECK,
    Alice,
    data_of,
    keyboard,
    paused_by,
)
from tests.adapters.automation.test_schedule_list_rewritten import shown_now
from tests.adapters.telegram_harness import start_app
from tests.fakes.anthropic_api import FakeAnthropic, text
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until

GROUP = -100
STALL_S = 3.0  # the rewrite's answer this late: its record lands after the press is read
GONE = "That button no longer works"


async def started(db: Path, anthropic: FakeAnthropic, telegram: FakeTelegram) -> App:
    anthropic.responder = lambda body: text("Queue checked: nothing stuck.")
    return await start_app(db, anthropic, telegram, acme_extra={"schedules": [QUEUE_CHECK]})


async def reply_to_press(telegram: FakeTelegram, data: str, message: dict[str, Any]) -> str:
    """alice presses the button whose callback data is `data` on `message` (as her client
    shows it); the bot's next message to her."""
    before = len(telegram.chat(ALICE))
    telegram.push_callback(data, user=ALICE, message=message)
    await until(lambda: len(telegram.chat(ALICE)) > before, wait_s=20)
    return telegram.chat(ALICE)[before]


async def test_resume_pressed_before_the_rewrite_is_recorded_resumes(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    app = await started(db_path, anthropic_api, telegram_api)
    alice = Alice(telegram_api)
    try:
        listing = await alice.listing()
        telegram_api.fail(
            "editMessageText", 200, stall_s=STALL_S, when=lambda p: "paused by" in p["text"]
        )
        telegram_api.push_callback(
            data_of(listing, "Pause queue-check"), user=ALICE, message=listing
        )
        await until(lambda: "paused by alice" in shown_now(telegram_api, listing)["text"])
        rewritten = shown_now(telegram_api, listing)
        assert keyboard(rewritten)[0][0][0] == "Resume queue-check"
        # The rewrite's answer stalls: the bot has not recorded it, nor said "is paused".
        assert alice.said("is paused") == 0

        said = await reply_to_press(
            telegram_api, data_of(rewritten, "Resume queue-check"), rewritten
        )
        assert said.startswith("Schedule queue-check is paused"), said  # the first press's
        await alice.answered("Schedule queue-check runs again", 0)
        assert await paused_by(app) is None, "Resume paused the schedule again"
        assert alice.said("is paused") == 1
    finally:
        await app.stop()


async def test_pause_pressed_on_the_list_before_its_rewrite_pauses(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    """The operator presses the Pause they see, on a client that has not redrawn the list
    since another press turned it into Resume: it pauses (as they asked), and does not
    resume (what the message shows now)."""
    app = await started(db_path, anthropic_api, telegram_api)
    alice = Alice(telegram_api)
    try:
        listing = await alice.listing()
        seen = copy.deepcopy(listing)  # as her client shows it
        pause = data_of(listing, "Pause queue-check")
        await alice.press(pause, listing, "Schedule queue-check is paused")
        rewritten = shown_now(telegram_api, listing)
        assert keyboard(rewritten)[0][0][0] == "Resume queue-check"  # recorded: the reply came

        said = await reply_to_press(telegram_api, pause, seen)
        assert said.startswith("Schedule queue-check is paused"), said
        assert await paused_by(app) == "alice"
        await app.bridge.settle()
        assert alice.said("runs again") == 0
    finally:
        await app.stop()


async def test_a_press_naming_another_chats_list_does_nothing(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    """A hostile client copies the callback data of the group's list onto a press of the list
    in alice's DM: the button no longer works, and nothing is paused."""
    app = await started(db_path, anthropic_api, telegram_api)
    alice = Alice(telegram_api)
    try:
        mine = await alice.listing()
        telegram_api.push_message("/schedules", user=ALICE, chat=GROUP, chat_type="group")
        await until(lambda: any("Schedules:" in m for m in telegram_api.chat(GROUP)), wait_s=20)
        [theirs] = [
            m
            for m in telegram_api.posted.values()
            if m["chat"]["id"] == GROUP and "Schedules:" in m["text"]
        ]

        said = await reply_to_press(telegram_api, data_of(theirs, "Pause queue-check"), mine)
        assert said.startswith(GONE), said
        await app.bridge.settle()
        assert await paused_by(app) is None, "a press naming the group's list paused"
    finally:
        await app.stop()


async def test_a_button_posted_before_presses_named_their_delivery_still_works(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    """Lists an older Switchboard posted are still in chats, their buttons' data `cmd:<place>`
    alone: such a press runs the button at that place of the message as recorded now."""
    app = await started(db_path, anthropic_api, telegram_api)
    alice = Alice(telegram_api)
    try:
        listing = await alice.listing()
        await app.bridge.settle()  # recorded as posted, long ago
        place = data_of(listing, "Pause queue-check").rpartition(":")[0]
        assert place == "cmd:0"
        said = await reply_to_press(telegram_api, place, listing)
        assert said.startswith("Schedule queue-check is paused"), said
        assert await paused_by(app) == "alice"
    finally:
        await app.stop()
