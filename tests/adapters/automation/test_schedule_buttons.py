"""Buttons under /schedules in Telegram (issue 31): each schedule's Pause (Resume once paused)
and Run now, each wake-up's Cancel. A press runs the sub-command it stands for, as typing it
would, as the operator who pressed it; a stranger's press changes nothing. Through the real
App, python-telegram-bot and the fake Bot API, whose spec check refuses a keyboard Telegram
would (callback data over 64 bytes, a button without a label)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from adapters.server.app import App
from bridge.automation.steering import WakeupView
from bridge.events import BridgeEventType
from tests.adapters.telegram_harness import start_app
from tests.fakes.anthropic_api import FakeAnthropic, Reply, text, tools
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until, wait_for

ALICE, STRANGER = 1001, 666
REMIND = "remind me to check the deploy"
QUEUE_CHECK = {
    "id": "queue-check",
    "agent": "assistant",
    "every": "1h",
    "prompt": "Check the deploy queue.",
}


def model(body: dict[str, Any]) -> Reply:
    """alice's request sets a wake-up two hours away; a scheduled run answers."""
    if REMIND in json.dumps(body["messages"][-1]):
        return tools(("schedule_wakeup", {"when": "2h", "note": "check the deploy again"}))
    return text("Queue checked: nothing stuck.")


def keyboard(message: dict[str, Any]) -> list[list[tuple[str, str]]]:
    """The buttons under a posted message, row by row: (label, callback data)."""
    markup = message.get("reply_markup") or {}
    markup = json.loads(markup) if isinstance(markup, str) else markup
    return [[(b["text"], b["callback_data"]) for b in row] for row in markup["inline_keyboard"]]


def places(message: dict[str, Any]) -> list[list[tuple[str, str]]]:
    """The buttons under a posted message, row by row: (label, `cmd:<place>`), their callback
    data less the delivery it names (the same for all of them, one this message showed)."""
    named = {data.split(":", 2)[2] for row in keyboard(message) for _, data in row}
    assert len(named) == 1, f"the buttons name {named}, not one delivery each"
    return [[(label, data.rpartition(":")[0]) for label, data in row] for row in keyboard(message)]


def data_of(message: dict[str, Any], label: str) -> str:
    """The callback data of the button labelled `label` under `message`."""
    return next(data for row in keyboard(message) for shown, data in row if shown == label)


class Alice:
    """alice's chat with the bot: what she types, presses and reads."""

    def __init__(self, telegram: FakeTelegram) -> None:
        self.telegram = telegram

    def said(self, words: str) -> int:
        return sum(words in m for m in self.telegram.chat(ALICE))

    async def answered(self, words: str, before: int) -> None:
        await until(lambda: self.said(words) > before, wait_s=20)

    async def listing(self) -> dict[str, Any]:
        """Type /schedules; the answer as posted, with its keyboard."""
        before = self.said("Schedules:")
        self.telegram.push_message("/schedules", user=ALICE)
        await self.answered("Schedules:", before)
        posted = [m for m in self.telegram.posted.values() if "Schedules:" in m["text"]]
        return max(posted, key=lambda m: int(m["message_id"]))

    async def press(self, data: str, message: dict[str, Any], reply: str) -> None:
        before = self.said(reply)
        self.telegram.push_callback(data, user=ALICE, message=message)
        await self.answered(reply, before)


async def paused_by(app: App) -> str | None:
    [view] = await app.bridge.automations.schedules("acme")
    return view.paused_by


async def with_a_wakeup(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> tuple[App, WakeupView]:
    """acme with the queue-check schedule, and the wake-up alice asked its agent to set."""
    anthropic_api.responder = model
    app = await start_app(
        db_path,
        anthropic_api,
        telegram_api,
        agent_tools=("notify_operator", "schedule_wakeup"),
        acme_extra={"schedules": [QUEUE_CHECK]},
    )
    try:
        telegram_api.push_message(REMIND, user=ALICE)
        await until(lambda: bool(app.bridge.automations.wakeups("acme")), wait_s=20)
    except BaseException:
        await app.stop()
        raise
    [wakeup] = app.bridge.automations.wakeups("acme")
    return app, wakeup


async def test_the_buttons_under_schedules_pause_run_and_cancel(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    app, wakeup = await with_a_wakeup(db_path, anthropic_api, telegram_api)
    alice = Alice(telegram_api)
    try:
        listing = await alice.listing()
        pause_row, [(cancel, cancel_data)] = places(listing)
        assert pause_row == [("Pause queue-check", "cmd:0"), ("Run queue-check now", "cmd:1")]
        assert cancel.startswith("Cancel assistant's wake-up at ") and cancel.endswith(" UTC")
        assert cancel_data == "cmd:2"

        pause = data_of(listing, "Pause queue-check")
        telegram_api.push_callback(pause, user=STRANGER, message=listing)
        refused = await wait_for(app.runtime, BridgeEventType.INBOUND_REFUSED)
        assert refused.data.sender_id == str(STRANGER)
        await app.bridge.settle()
        assert await paused_by(app) is None, "a stranger's press paused the schedule"

        await alice.press(pause, listing, "Schedule queue-check is paused")
        assert await paused_by(app) == "alice"
        listing = await alice.listing()
        assert places(listing)[0] == [
            ("Resume queue-check", "cmd:0"),
            ("Run queue-check now", "cmd:1"),
        ]

        asked = len(anthropic_api.requests)
        run_now = data_of(listing, "Run queue-check now")
        await alice.press(run_now, listing, "Schedule queue-check runs now")
        await alice.answered("Queue checked: nothing stuck.", 0)
        [run] = anthropic_api.requests[asked:]
        assert "Run now, asked for by alice" in json.dumps(run["messages"])

        await alice.press(data_of(listing, cancel), listing, "The wake-up assistant had set for")
        assert not any(wakeup.id in m for m in telegram_api.chat(ALICE)), "its id shown"
        assert app.bridge.automations.wakeups("acme") == []
    finally:
        await app.stop()


async def test_a_wake_up_is_listed_and_cancelled_by_its_short_handle_not_its_id(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    """Where there are no buttons to press (the terminal), an operator types what the list
    shows: six characters, not the wake-up's 36."""
    app, wakeup = await with_a_wakeup(db_path, anthropic_api, telegram_api)
    alice = Alice(telegram_api)
    try:
        listing = (await alice.listing())["text"]
        assert wakeup.id not in listing
        [line] = [x for x in listing.split("\n") if "(assistant; cancel: " in x]
        handle = line.rpartition("cancel: ")[2].rstrip(")")
        assert len(handle) == 6 and wakeup.id.endswith(handle)
        before = alice.said("is cancelled")
        telegram_api.push_message(f"/schedules cancel {handle}", user=ALICE)
        await alice.answered("The wake-up assistant had set for", before)
        assert app.bridge.automations.wakeups("acme") == []
        assert not any(wakeup.id in m for m in telegram_api.chat(ALICE))
    finally:
        await app.stop()
