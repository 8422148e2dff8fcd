"""Schedules and wake-ups of a real `switchboard run` (the console script, a config file, the
door process) killed with SIGKILL and started again: a schedule every two seconds answers on
Telegram and on Slack, and across the kill no slot is lost and none runs twice (slots missed
while it was down run once, saying how many); a wake-up an agent set is kept and fires after
the restart."""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
from datetime import datetime
from pathlib import Path
from typing import Any

from tests.adapters.doors.test_door_process import run
from tests.adapters.slack_harness import ACME_SECRET, BOB, OPS
from tests.config_file import anthropic, workspace, write_config
from tests.fakes.anthropic_api import FakeAnthropic, Reply, text, tools
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until

ALICE_CHAT = 1001
PERIOD_S = 2
SLOT = re.compile(r'Scheduled run of \\"(\w+)\\" for ([\d-]+ [\d:]+)')


def config(
    tmp_path: Path, model: str, slack: FakeSlack, telegram: FakeTelegram, *, scheduled: bool = True
) -> Path:
    team = next(t for t in slack.teams.values() if t.team_id == "T1")
    alice = {"id": "alice", "primary": True, "telegram_user_id": 1001, "notify_via": "telegram"}
    bob = {"id": "bob", "slack_user_id": BOB, "notify_via": "slack"}
    acme = workspace(
        "acme",
        [alice, bob],
        telegram={"bot_token": telegram.token, "api_base_url": telegram.base_url},
        slack={
            "team_id": "T1",
            "bot_token": team.token,
            "signing_secret": ACME_SECRET,
            "api_base_url": slack.base_url,
            "channels": [OPS],
        },
        agent_tools=["schedule_wakeup", "notify_operator"],
    )
    every = {"agent": "assistant", "every": f"{PERIOD_S}s", "prompt": "Check the queue."}
    schedules = (
        [{"id": "tg", **every}, {"id": "sl", **every, "deliver": "bob"}] if scheduled else []
    )
    return write_config(
        tmp_path / "switchboard.toml",
        db=tmp_path / "sb.db",
        provider=anthropic(model),
        workspaces=[{**acme, "schedules": schedules, "wakeups": {"min_delay": "1s"}}],
        server={"schedule_min_every": "1s"},  # every PERIOD_S, under the default floor
    )


def slot_answer(body: dict[str, Any]) -> Reply:
    last = json.dumps(body["messages"][-1])
    found = SLOT.search(last)
    if found:
        return text(f"{found.group(1)} checked for {found.group(2)}")
    if "Wake-up you scheduled" in last:
        return text("Back as promised: the build is green.")
    return text("ok")


def runs(db: Path) -> list[tuple[str, str, int]]:
    with sqlite3.connect(db) as connection:
        return connection.execute(
            "SELECT automation_id, fire_key, missed FROM automation_runs ORDER BY slot_at"
        ).fetchall()


async def test_a_schedule_keeps_its_slots_across_a_sigkill_on_telegram_and_slack(
    tmp_path: Path, anthropic_api: FakeAnthropic, slack_api: FakeSlack, telegram_api: FakeTelegram
) -> None:
    anthropic_api.responder = slot_answer
    path = config(tmp_path, anthropic_api.url, slack_api, telegram_api)
    first = await run(path, "first")
    try:
        await until(lambda: len(telegram_api.chat(ALICE_CHAT)) >= 2, 30)
        await until(lambda: any("sl checked" in p["text"] for p in slack_api.posts()), 30)
    finally:
        first.kill()
        await first.stop()
    before = runs(tmp_path / "sb.db")
    await asyncio.sleep(3 * PERIOD_S)  # slots go by while nothing runs
    second = await run(path, "second")
    try:
        await until(
            lambda: any("not running at" in json.dumps(r) for r in anthropic_api.requests), 30
        )
        count = len(runs(tmp_path / "sb.db"))
        await until(lambda: len(runs(tmp_path / "sb.db")) >= count + 4, 30)
        # A slot whose model call is done may have its answer still on its way: a stop then
        # leaves it for the next start. Stop once every slot asked of the model is answered.
        await until(lambda: tg_fired(anthropic_api) <= tg_answered(telegram_api), 30)
    finally:
        await second.stop()

    after = runs(tmp_path / "sb.db")
    for schedule in ("tg", "sl"):
        slots = sorted(key for s, key, _ in after if s == schedule)
        assert len(slots) == len(set(slots)), f"{schedule}: a slot ran twice"
        covered = sum(1 + missed for s, _, missed in after if s == schedule)
        first_at = min(_seconds(k) for k in slots)
        last_at = max(_seconds(k) for k in slots)
        assert covered == (last_at - first_at) // PERIOD_S + 1, f"{schedule}: a slot was lost"
    assert any(missed for s, _, missed in after if (s, _, missed) not in before)
    fired = _fired(anthropic_api)
    assert len(fired) == len(set(fired)), f"a slot's run asked the model twice: {fired}"
    assert tg_answered(telegram_api) == tg_fired(anthropic_api)
    shown = [m for m in telegram_api.chat(ALICE_CHAT) if "tg checked" in m]
    assert all(m.startswith("From schedule tg") for m in shown), f"unnamed answers: {shown}"
    # (An answer whose send was in flight at the kill may show twice: the Bot API cannot tell
    # whether it landed, so the outbox sends it again rather than lose it.)


def _seconds(fire_key: str) -> int:
    return int(datetime.fromisoformat(fire_key).timestamp())


async def test_a_wakeup_an_agent_set_fires_after_a_sigkill(
    tmp_path: Path, anthropic_api: FakeAnthropic, slack_api: FakeSlack, telegram_api: FakeTelegram
) -> None:
    path = config(tmp_path, anthropic_api.url, slack_api, telegram_api, scheduled=False)
    anthropic_api.script = [
        tools(("schedule_wakeup", {"when": "4s", "note": "Check whether the build is green."}))
    ]
    anthropic_api.responder = slot_answer
    first = await run(path, "first")
    try:
        telegram_api.push_message("tell me when the build is green", user=1001)
        await until(lambda: any("wake-up set for" in m for m in telegram_api.chat(ALICE_CHAT)), 30)
    finally:
        first.kill()
        await first.stop()
    second = await run(path, "second")
    try:
        await until(lambda: any("Back as promised" in m for m in telegram_api.chat(ALICE_CHAT)), 30)
    finally:
        await second.stop()
    woken = [r for r in anthropic_api.requests if "Wake-up you scheduled" in json.dumps(r)]
    assert len(woken) == 1, "the wake-up fired more than once (or never)"
    assert "Check whether the build is green." in json.dumps(woken[0])


def _fired(anthropic_api: FakeAnthropic) -> list[tuple[str, str]]:
    """(schedule, slot) of each run that asked the model, in order."""
    asked = [SLOT.search(json.dumps(r["messages"][-1])) for r in anthropic_api.requests]
    return [(m.group(1), m.group(2)) for m in asked if m]


def tg_fired(anthropic_api: FakeAnthropic) -> set[str]:
    return {slot for schedule, slot in _fired(anthropic_api) if schedule == "tg"}


def tg_answered(telegram_api: FakeTelegram) -> set[str]:
    return {m.split("checked for ")[1] for m in telegram_api.chat(ALICE_CHAT) if "tg " in m}
