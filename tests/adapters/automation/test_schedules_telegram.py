"""Schedules through the real App, python-telegram-bot and the fake Bot API, on the real clock
(seconds-scale schedules): a run's answer reaches the primary operator's chat under a line
naming the schedule, a paused schedule stops, and a quiet heartbeat says nothing."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from config.automation import HEARTBEAT_OK
from tests.adapters.telegram_harness import delivery_recorded, start_app
from tests.fakes.anthropic_api import FakeAnthropic, Reply, text, tools
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until

ALICE_CHAT = 1001


def asked(body: dict[str, Any]) -> str:
    return json.dumps(body["messages"][-1])


# Schedules every two seconds, under the default floor of `every`: lowered for these tests.
FAST = {"schedule_min_every": "1s"}


def schedule(**fields: Any) -> dict[str, Any]:
    return {"agent": "assistant", **fields}


async def test_a_schedule_every_two_seconds_reaches_the_primary_operator_until_paused(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    runs: list[str] = []

    def answer(body: dict[str, Any]) -> Reply:
        runs.append(asked(body))
        return text(f"Queue checked, run {len(runs)}: nothing stuck.")

    anthropic_api.responder = answer
    tick = schedule(id="queue-check", every="2s", prompt="Check the deploy queue.")
    app = await start_app(
        db_path, anthropic_api, telegram_api, acme_extra={"schedules": [tick]}, server=FAST
    )

    async def command(line: str, reply: str) -> str:
        telegram_api.push_message(line, user=ALICE_CHAT)
        await until(lambda: any(reply in m for m in telegram_api.chat(ALICE_CHAT)), wait_s=20)
        return next(m for m in telegram_api.chat(ALICE_CHAT) if reply in m)

    try:
        await until(lambda: len(runs) >= 2, wait_s=20)
        await until(lambda: any("run 1:" in m for m in telegram_api.chat(ALICE_CHAT)), 20)
        first = next(m for m in telegram_api.chat(ALICE_CHAT) if "run 1:" in m)
        assert "queue-check" in first and "Queue checked, run 1: nothing stuck." in first
        assert '[Scheduled run of \\"queue-check\\"' in runs[0]
        assert "Check the deploy queue." in runs[0]

        listed = await command("/schedules", "Schedules:")
        assert "queue-check (every 2s, agent assistant): next" in listed
        assert "last run" in listed
        await command("/schedules pause queue-check", "is paused")
        await app.bridge.settle()
        paused_at = len(runs)
        await asyncio.sleep(4.5)  # two periods and a jitter: a paused schedule stays quiet
        assert len(runs) == paused_at, "a paused schedule ran"
        assert "paused by alice" in await command("/schedules", "paused by")
        await command("/schedules run queue-check", "runs now")
        await until(lambda: len(runs) == paused_at + 1, wait_s=20)
        assert "Run now, asked for by alice" in runs[-1]
        said = await command("/schedules pause nightly", "No schedule")
        assert "queue-check" in said, "the refusal lists the schedules there are"
    finally:
        await app.stop()


async def test_a_heartbeat_with_nothing_to_report_says_nothing(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    answers = [text(HEARTBEAT_OK), text("The disk is 95% full.")]
    anthropic_api.responder = lambda body: answers.pop(0) if answers else text(HEARTBEAT_OK)
    beat = schedule(id="beat", kind="heartbeat", every="2s")
    app = await start_app(
        db_path, anthropic_api, telegram_api, acme_extra={"schedules": [beat]}, server=FAST
    )
    try:
        await until(lambda: bool(telegram_api.chat(ALICE_CHAT)), wait_s=20)
        [said] = telegram_api.chat(ALICE_CHAT)
        assert "The disk is 95% full." in said and "beat" in said
        assert HEARTBEAT_OK in asked(anthropic_api.requests[0])
        outcomes = [r.outcome for r in await app.bridge.automation.recent_runs("acme")]
        assert "quiet" in outcomes and "completed" in outcomes
        url = f"http://127.0.0.1:{app.port}/metrics"
        async with aiohttp.ClientSession() as http, http.get(url) as answer:
            metrics = await answer.text()
        for outcome in ("started", "quiet", "completed"):
            labels = f'kind="schedule",outcome="{outcome}",workspace="acme"'
            assert f"switchboard_automation_runs_total{{{labels}}}" in metrics, outcome
    finally:
        await app.stop()


async def test_a_schedules_max_rounds_ends_a_run_that_would_go_on(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    anthropic_api.responder = lambda body: tools(("notify_operator", {"message": "still going"}))
    hourly = schedule(id="hourly", every="1h", prompt="Tidy up.", max_rounds=2)
    app = await start_app(db_path, anthropic_api, telegram_api, acme_extra={"schedules": [hourly]})
    try:
        await app.bridge.automations.run_now("acme", "hourly", "alice")
        await until(lambda: any("within 2 rounds" in m for m in telegram_api.chat(ALICE_CHAT)), 20)
        assert len(anthropic_api.requests) == 2
        [failed] = [m for m in telegram_api.chat(ALICE_CHAT) if "within 2 rounds" in m]
        assert failed.startswith("From schedule hourly")
        [run] = await app.bridge.automation.recent_runs("acme")
        assert run.outcome == "failed" and "2 rounds" in (run.detail or "")
    finally:
        await app.stop()


async def test_a_reply_to_a_scheduled_answer_reaches_that_runs_session(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    answers = [text("Two builds are stuck."), text("Restarted both.")]
    anthropic_api.responder = lambda body: answers.pop(0)
    hourly = schedule(id="builds", every="1h", prompt="Check the builds.")
    app = await start_app(db_path, anthropic_api, telegram_api, acme_extra={"schedules": [hourly]})
    try:
        await app.bridge.automations.run_now("acme", "builds", "alice")
        await until(lambda: any("stuck" in m for m in telegram_api.chat(ALICE_CHAT)), 20)
        answer = next(m for m in telegram_api.posted.values() if "stuck" in m["text"])
        await delivery_recorded(app)
        telegram_api.push_message("restart them", user=ALICE_CHAT, reply_to_message=answer)
        await until(lambda: any("Restarted both." in m for m in telegram_api.chat(ALICE_CHAT)), 20)
    finally:
        await app.stop()
    followed = json.dumps(anthropic_api.requests[1]["messages"])
    assert "Check the builds." in followed, "the reply went to another session"
    assert "restart them" in followed and "schedule builds" in followed


async def test_a_schedule_added_by_a_reload_runs_and_the_bot_is_not_restarted(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    anthropic_api.responder = lambda body: text("Reloaded schedule ran.")
    app = await start_app(db_path, anthropic_api, telegram_api, server=FAST)
    try:
        assert app.path is not None
        started = [c for c in telegram_api.calls if c.method == "getMe"]
        table = app.path.read_text()
        app.path.write_text(
            table + '\n[[workspaces.schedules]]\nid = "added"\nagent = "assistant"\n'
            'every = "2s"\nprompt = "New work."\n'
        )
        report = await app.reload()
        assert report.ok and report.changed == ("acme",), report
        await until(
            lambda: any("Reloaded schedule ran." in m for m in telegram_api.chat(ALICE_CHAT)), 20
        )
        again = [c for c in telegram_api.calls if c.method == "getMe"]
        assert again == started, "the bot was restarted"
    finally:
        await app.stop()


async def test_a_pause_while_a_run_is_starting_holds(
    db_path: Path,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The operator pauses a schedule while its run is starting (issue 38's class: the clock
    planned the next fire from what it knew before that start's writes): the run under way
    finishes, and no later one comes."""
    runs: list[str] = []

    def answer(body: dict[str, Any]) -> Reply:
        runs.append(asked(body))
        return text("checked")

    anthropic_api.responder = answer
    tick = schedule(id="queue-check", every="1s", prompt="Check the deploy queue.")
    app = await start_app(
        db_path, anthropic_api, telegram_api, acme_extra={"schedules": [tick]}, server=FAST
    )
    schedules = app.bridge.schedules
    starting, go_on = asyncio.Event(), asyncio.Event()
    start = app.bridge.runs.start

    async def held_start(*args: Any) -> Any:
        starting.set()
        await go_on.wait()
        return await start(*args)

    monkeypatch.setattr(app.bridge.runs, "start", held_start)
    try:
        await asyncio.wait_for(starting.wait(), 20)
        await schedules.pause("acme", "queue-check", "alice")
        go_on.set()
        await until(lambda: len(runs) == 1, wait_s=20)
        await asyncio.sleep(3)  # three periods: a paused schedule stays quiet
        assert len(runs) == 1, "the schedule ran after it was paused"
        assert schedules.next_fire("acme", "queue-check") is None
    finally:
        await app.stop()


async def test_run_now_pressed_twice_at_once_runs_once(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    """A double-clicked Run now (two requests side by side) starts one run: the second sees
    the first one going (issue 38's class: `busy` read before the first had recorded it)."""
    hold = asyncio.Event()
    anthropic_api.script = [text("checked", hold=hold)]
    tick = schedule(id="queue-check", every="1h", prompt="Check the deploy queue.")
    app = await start_app(db_path, anthropic_api, telegram_api, acme_extra={"schedules": [tick]})
    try:
        [acme] = app.config.workspaces
        [check] = acme.schedules
        outcomes = await asyncio.gather(
            *(app.bridge.schedules.run_now(acme, check, "alice") for _ in range(2))
        )
        assert sorted(outcomes) == ["skipped", "started"]
        hold.set()
        await app.runtime.wait_idle()
        assert len(anthropic_api.requests) == 1
    finally:
        await app.stop()
