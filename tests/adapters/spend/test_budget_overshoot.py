"""Issue 38's budgets, from the outside, on every topology: six operators' looping turns at
once against one small daily budget stay within it (each call let through reserved its
estimate in the same step as the check); one Approve spend lets a looping turn spend one
warn step more, then it holds again; a message to a held turn is answered at once, and
/status says "held by budget"."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from adapters.server.app import App
from adapters.server.status_cli import status
from bridge.admin.board import read_board
from bridge.spend.words import money
from tests.adapters.automation.test_schedule_buttons import keyboard
from tests.adapters.spend.budgeted import start_budgeted
from tests.adapters.spend.test_budget_e2e import SUMS, Looping, posted
from tests.fakes.anthropic_api import FakeAnthropic, Reply
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until
from tests.topology import Topology

USERS = [2001 + n for n in range(6)]
OPERATORS = [
    {"id": f"op{n}", "telegram_user_id": u, "notify_via": "telegram", "primary": n == 0}
    for n, u in enumerate(USERS)
]
LIMIT = 0.015  # about two and a half calls of the looping model
HELD = "Paused before the next model call"


class Gated(Looping):
    """The looping model, whose first answers wait until every turn has either sent its
    first call or been held before it: the calls that passed the gate are all under way at
    once, before any of their usage is recorded."""

    def __init__(self) -> None:
        super().__init__()
        self.go = asyncio.Event()

    def __call__(self, body: dict[str, Any]) -> Reply:
        reply = super().__call__(body)
        if not self.go.is_set():
            reply.hold = self.go
        return reply


@pytest.fixture
async def app(
    topology: Topology, db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> AsyncIterator[App]:
    budget = {"scope": "workspace", "period": "day", "limit_usd": LIMIT, "warn_at": None}
    yield await start_budgeted(
        topology, db_path, anthropic_api, telegram_api, budgets=[budget], operators=OPERATORS
    )
    await topology.stop()


def held(telegram: FakeTelegram) -> list[int]:
    return [u for u in USERS if any(t.startswith(HELD) for t in telegram.chat(u))]


async def test_six_looping_turns_at_once_stay_within_the_budget(
    app: App, topology: Topology, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    model = Gated()
    anthropic_api.responder = model
    for u in USERS:
        telegram_api.push_message("keep checking until I say stop", user=u)

    # Each turn either calls the model (its answer waits) or is held before the call.
    await until(lambda: len(anthropic_api.requests) + len(held(telegram_api)) >= 6, wait_s=60)
    model.go.set()
    await until(lambda: len(held(telegram_api)) == 6, wait_s=60)

    [row] = await topology.active.runtime.store.read_sql(SUMS)
    assert row["n"] == len(anthropic_api.requests) == model.calls
    assert 2 <= row["n"] <= 3, "as many calls as the budget holds, not one a session"
    assert row["c"] <= LIMIT + row["m"], f"${row['c']:.4f} spent of ${LIMIT}: past by a call"
    assert anthropic_api.refused == [] and telegram_api.refused == []


@pytest.fixture
async def approving(
    topology: Topology, db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> AsyncIterator[App]:
    """One operator, a $0.05 daily budget warned at half: an approval is worth $0.025."""
    budget = {"scope": "workspace", "period": "day", "limit_usd": 0.05, "warn_at": 0.5}
    yield await start_budgeted(
        topology, db_path, anthropic_api, telegram_api, budgets=[budget], operators=OPERATORS[:1]
    )
    await topology.stop()


async def test_an_approval_covers_one_step_then_the_turn_holds_again_and_says_so(
    approving: App, topology: Topology, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    model = Looping()
    anthropic_api.responder = model
    store = topology.active.runtime.store
    user = USERS[0]
    telegram_api.push_message("keep checking until I say stop", user=user)
    await until(lambda: held(telegram_api) == [user], wait_s=60)
    [before] = await store.read_sql(SUMS)

    # A message to the held turn is answered at once: which budget, until when, how to go on.
    telegram_api.push_message("are you there?", user=user)
    waits = "Your message waits: acme/assistant's turn here is held by budget workspace/day"
    await until(lambda: any(t.startswith(waits) for t in telegram_api.chat(user)), wait_s=30)
    answer = posted(telegram_api, user, waits)
    assert "renews at " in answer["text"] and "/approve_spend" in answer["text"]
    assert [label for row in keyboard(answer) for label, _ in row] == ["Approve spend"]
    telegram_api.push_message("/status", user=user)
    await until(
        lambda: any("held by budget workspace/day" in t for t in telegram_api.chat(user)),
        wait_s=30,
    )
    assert not any("thinking" in t for t in telegram_api.chat(user) if "held by budget" in t)
    # `switchboard status` (another reader of the store) and the console's board say so too.
    active = topology.active
    assert "held by budget workspace/day" in await status(active.bridge.config)
    board = await read_board(active.bridge, "acme")
    assert [a.what() for a in board.running] == ["held by budget workspace/day"]

    # One approval: about $0.025 more (four calls or so), then it holds again, saying why.
    to_user = posted(telegram_api, user, HELD)
    telegram_api.push_callback(keyboard(to_user)[0][0][1], user=user, message=to_user)
    again = f"{HELD}: it has spent the {money(0.025)} approved past the workspace's daily budget"
    await until(lambda: any(t.startswith(again) for t in telegram_api.chat(user)), wait_s=60)
    [after] = await store.read_sql(SUMS)
    more = after["n"] - before["n"]
    assert 1 <= more <= 0.025 / before["m"] + 1, f"{more} calls after one approval"
    assert after["c"] <= 0.05 + 0.025 + after["m"]
    assert len(anthropic_api.requests) == after["n"], "no call while held again"
    assert anthropic_api.refused == [] and telegram_api.refused == []
