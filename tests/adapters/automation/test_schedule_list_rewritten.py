"""A pressed `/schedules` list shows its new state where it was pressed (issue 43): after its
Pause the same message reads "paused by alice" with Resume where Pause was, after Resume the
other way round, after a wake-up's Cancel that wake-up is gone from it; the confirmation
still comes as a message of its own. Through the real App, python-telegram-bot and the fake
Bot API, pressing the callback query Telegram sends (the pressed message inside it), whose
editMessageText refuses a message the chat does not show and an edit that changes nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.adapters.automation.test_schedule_buttons import (
    ALICE,
    QUEUE_CHECK,
    REMIND,
    Alice,
    data_of,
    keyboard,
    model,
    places,
)
from tests.adapters.telegram_harness import start_app
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until


def shown_now(telegram: FakeTelegram, message: dict[str, Any]) -> dict[str, Any]:
    """The message as the chat shows it now (edits included)."""
    return telegram.posted[message["message_id"]]


async def test_a_pressed_schedules_list_edits_itself_to_its_new_state(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    anthropic_api.responder = model
    app = await start_app(
        db_path,
        anthropic_api,
        telegram_api,
        agent_tools=("notify_operator", "schedule_wakeup"),
        acme_extra={"schedules": [QUEUE_CHECK]},
    )
    alice = Alice(telegram_api)
    try:
        telegram_api.push_message(REMIND, user=ALICE)
        await until(lambda: bool(app.bridge.automations.wakeups("acme")), wait_s=20)
        [wakeup] = app.bridge.automations.wakeups("acme")
        listing = await alice.listing()
        assert places(listing)[0][0] == ("Pause queue-check", "cmd:0")

        pause = data_of(listing, "Pause queue-check")
        await alice.press(pause, listing, "Schedule queue-check is paused")
        await until(lambda: "paused by alice" in shown_now(telegram_api, listing)["text"])
        pressed = shown_now(telegram_api, listing)
        assert places(pressed)[0] == [
            ("Resume queue-check", "cmd:0"),
            ("Run queue-check now", "cmd:1"),
        ], "the pressed list still offers Pause"
        assert data_of(pressed, "Resume queue-check") != pause, "the old list's data"
        # Edited in place: the confirmation comes as its own message, no second list.
        assert sum("Schedules:" in m for m in telegram_api.chat(ALICE)) == 1

        # Its new Resume button works, and the list turns back.
        resume = data_of(pressed, "Resume queue-check")
        await alice.press(resume, pressed, "Schedule queue-check runs again")
        await until(lambda: "paused by" not in shown_now(telegram_api, listing)["text"])
        assert places(shown_now(telegram_api, listing))[0][0] == ("Pause queue-check", "cmd:0")

        now = shown_now(telegram_api, listing)
        [[(cancel, _)]] = [row for row in keyboard(now) if row[0][0].startswith("Cancel")]
        await alice.press(data_of(now, cancel), now, "is cancelled")
        await until(lambda: wakeup.id not in shown_now(telegram_api, listing)["text"])
        assert [row[0][0] for row in keyboard(shown_now(telegram_api, listing))] == [
            "Pause queue-check"
        ], "the cancelled wake-up's button is still there"
    finally:
        await app.stop()
