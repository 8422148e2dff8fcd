"""Buttons under a command's answer (issue 31): kept with the delivery, so a restart before
the send keeps them; sent under the answer's last part; a press that names only its place (as
a button an older version posted does) has the bridge read the command back from the message's
delivery, in that message's workspace only."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from adapters.telegram.platform import TELEGRAM
from bridge.automation.steering import ScheduleView, WakeupView
from bridge.automation.words import listing
from bridge.outbox import Outbox
from bridge.types import Button, InboundChat, Route, TransportLimits
from config import SwitchboardConfig, load
from tests.backends import folder_of
from tests.bridge.fakes import RecordingTransport
from tests.bridge.harness import close_bridge, dm, open_bridge
from tests.config_file import anthropic, workspace, write_config
from tests.fakes.anthropic_api import FakeAnthropic

ALICE = {"id": "alice", "primary": True, "telegram_user_id": 1001}
# Runs at 03:00 only: no run of its own during the test.
NIGHTLY = {"id": "nightly", "agent": "assistant", "cron": "0 3 * * *", "prompt": "Tidy up."}


def config_for(db: Path, fake: FakeAnthropic) -> SwitchboardConfig:
    """acme with its schedule, and globex, whose operator alice also is."""
    acme = workspace("acme", [ALICE], telegram={"bot_token": "123:acme"})
    globex = workspace("globex", [ALICE], telegram={"bot_token": "456:globex"})
    path = folder_of(db) / "switchboard.toml"
    workspaces = [{**acme, "schedules": [NIGHTLY]}, globex]
    provider = anthropic(fake.url)
    return load(write_config(path, db=db, provider=provider, port=None, workspaces=workspaces))


def press(message_id: str, place: int, update_id: int, workspace: str = "acme") -> InboundChat:
    """alice presses the button at `place` under the bot's message `message_id`."""
    return InboundChat(
        route=Route(
            platform=TELEGRAM.name,
            workspace_id=workspace,
            conversation_id="1001",
            reply_to=message_id.split(":")[1],
        ),
        sender_id="1001",
        dedupe_keys=(f"update:{update_id}",),
        text=None,
        is_direct=True,
        mentions_bot=True,
        pressed=True,
        replied_to=message_id,
        button=place,
    )


async def test_buttons_outlive_a_restart_and_a_press_runs_their_command_here_only(
    anthropic_api: FakeAnthropic, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = config_for(db_path, anthropic_api)
    monkeypatch.setattr(Outbox, "wake", lambda self, key: None)  # dies before any send
    bridge = await open_bridge(config, RecordingTransport())
    await bridge.receive(dm("/schedules"))
    [intent] = await bridge.store.intents()
    await close_bridge(bridge)
    monkeypatch.undo()
    assert intent.buttons == (
        Button("Pause nightly", "/schedules pause nightly", 0),
        Button("Run nightly now", "/schedules run nightly", 0),
    )

    # A part holds 120 characters here: the listing goes in parts, its buttons under the last.
    transport = RecordingTransport(limits=TransportLimits(max_chars=120))
    bridge = await open_bridge(config, transport)
    try:
        await bridge.settle()
        *parts, last = transport.sent
        assert parts and all(p.buttons == () for p in parts)
        assert last.buttons == intent.buttons and "/schedules pause ID" in last.text
        listing = f"1001:{len(transport.sent)}"  # as the transport named the last part

        async def answer(chat: InboundChat) -> str:
            before = len(transport.sent)
            await bridge.receive(chat)
            await bridge.settle()
            return " ".join(s.text for s in transport.sent[before:])

        assert "is paused" in await answer(press(listing, 0, update_id=2))
        [view] = await bridge.automations.schedules("acme")
        assert view.paused_by == "alice"
        gone = "That button no longer works"
        assert gone in await answer(press(listing, 7, update_id=3))
        assert gone in await answer(press(listing, 0, update_id=4, workspace="globex"))
        assert gone in await answer(press("1001:999", 0, update_id=5))
    finally:
        await close_bridge(bridge)


def test_the_first_ten_schedules_and_wakeups_get_buttons_and_the_rest_are_said() -> None:
    now = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)

    def schedule(n: int, *, paused: bool = False, enabled: bool = True) -> ScheduleView:
        by = "alice" if paused else None
        return ScheduleView(f"s{n}", "assistant", "every 1h", False, enabled, by, now, None)

    schedules = [schedule(0, paused=True), schedule(1, enabled=False)]
    schedules += [schedule(n) for n in range(2, 12)]
    due = now + timedelta(hours=2)
    wakeups = [WakeupView(f"wak_{n}", "assistant", "ses", due, "look") for n in range(11)]
    answer = listing(schedules, wakeups, now)
    rows: dict[int, list[str]] = {}
    for button in answer.buttons:
        rows.setdefault(button.row, []).append(button.command)
    assert len(rows) == 20, "a row for each of the first ten schedules and ten wake-ups"
    assert rows[0] == ["/schedules resume s0", "/schedules run s0"]
    assert rows[1] == ["/schedules run s1"], "off in the config: nothing to pause"
    assert rows[9] == ["/schedules pause s9", "/schedules run s9"]
    assert rows[10] == ["/schedules cancel wak_0"] and rows[19] == ["/schedules cancel wak_9"]
    assert "Cancel assistant's wake-up at 14:00:00 UTC" in [b.label for b in answer.buttons]
    assert "first 10 schedules; 2 more: use /schedules pause ID." in answer.text
    assert "first 10 wake-ups; 1 more: use /schedules cancel WAKE-UP." in answer.text
