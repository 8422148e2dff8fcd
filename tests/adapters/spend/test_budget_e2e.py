"""Issue 32's "done when", from the outside, on every topology: a $0.05 daily budget and a model
that would loop forever. The turn stops before the call that would pass the limit; the operator
who asked and the primary operator are told in Telegram, why and until when; /usage and
/metrics agree with the store to the token; Approve spend lets that one turn go on."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from adapters.server.app import App
from bridge.spend.words import money
from tests.adapters.automation.test_schedule_buttons import keyboard
from tests.adapters.spend.budgeted import start_budgeted
from tests.adapters.test_metrics import scrape, value
from tests.fakes.anthropic_api import FakeAnthropic, Reply, text, tools
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until
from tests.topology import Topology

ALICE, BOB = 1001, 1002
OPERATORS = [
    {"id": "alice", "telegram_user_id": ALICE, "notify_via": "telegram"},
    {"id": "bob", "primary": True, "telegram_user_id": BOB, "notify_via": "telegram"},
]
BUDGET = {"scope": "workspace", "period": "day", "limit_usd": 0.05, "warn_at": 0.5}
SUMS = (
    "SELECT COALESCE(SUM(input_tokens), 0) AS i, COALESCE(SUM(output_tokens), 0) AS o,"
    " COALESCE(SUM(cache_read_tokens), 0) AS r, COALESCE(SUM(cache_write_tokens), 0) AS w,"
    " COALESCE(SUM(cost_usd), 0) AS c, COUNT(*) AS n, COALESCE(MAX(cost_usd), 0) AS m"
    " FROM model_usage"
)


class Looping:
    """A model that never stops calling a tool (each call a little different), until told."""

    def __init__(self) -> None:
        self.calls = 0
        self.stop = False

    def __call__(self, body: dict[str, Any]) -> Reply:
        self.calls += 1
        if self.stop:
            return text("Stopped looping.")
        notes = f"Round {self.calls}: still checking. " * 60  # about 400 tokens: $0.006 a call
        return tools(("sleep", {"seconds": self.calls / 1e6}), say=notes)


@pytest.fixture
async def app(
    topology: Topology, db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> AsyncIterator[App]:
    yield await start_budgeted(
        topology, db_path, anthropic_api, telegram_api, budgets=[BUDGET], operators=OPERATORS
    )
    await topology.stop()


def chat(telegram: FakeTelegram, user: int) -> list[str]:
    return telegram.chat(user)


def posted(telegram: FakeTelegram, user: int, start: str) -> dict[str, Any]:
    found = [
        m
        for m in telegram.posted.values()
        if m["chat"]["id"] == user and m["text"].startswith(start)
    ]
    assert found, f"no message to {user} starting {start!r}: {chat(telegram, user)}"
    return found[-1]


async def test_a_looping_turn_stops_at_the_daily_limit_and_everyone_can_see_it(
    app: App, topology: Topology, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    model = Looping()
    anthropic_api.responder = model
    store = topology.active.runtime.store
    telegram_api.push_message("keep checking until I say stop", user=ALICE)

    held = "Paused before the next model call: it would pass the workspace's daily budget of $0.05"
    await until(lambda: any(t.startswith(held) for t in chat(telegram_api, ALICE)), wait_s=60)
    await until(
        lambda: any("is paused before its next model call" in t for t in chat(telegram_api, BOB))
    )
    [row] = await store.read_sql(SUMS)
    inp, out, cread, cwrite, cost, calls, dearest = (row[k] for k in "iorwcnm")
    assert calls == len(anthropic_api.requests) == model.calls, "each call recorded once"
    assert cost <= 0.05, "no call passed the limit"
    assert cost + 2 * dearest > 0.05, "it did not stop long before the limit"

    # alice is told why and until when (midnight in Berlin), with the buttons to act.
    to_alice = posted(telegram_api, ALICE, held)
    assert f"({money(cost)} spent so far)" in to_alice["text"]
    assert "renews at " in to_alice["text"] and "Europe/Berlin" in to_alice["text"]
    assert [label for row in keyboard(to_alice) for label, _ in row] == ["Approve spend", "Stop"]
    # bob, the primary operator, hears of it too, and got the warning at half the budget once.
    to_bob = chat(telegram_api, BOB)
    assert sum(t.startswith("The workspace's daily budget is ") for t in to_bob) == 1
    assert any(t.startswith("acme/assistant's turn (for alice) is paused") for t in to_bob)

    # /usage in chat and /metrics say what the store says.
    telegram_api.push_message("/usage", user=ALICE)
    await until(
        lambda: any(t.startswith("Spend in workspace acme") for t in chat(telegram_api, ALICE))
    )
    usage = next(t for t in chat(telegram_api, ALICE) if t.startswith("Spend in workspace acme"))
    assert f"Today: {money(cost)} ({inp + cread + cwrite:,} in" in usage
    assert "$0.05" in usage and "Budgets:" in usage
    samples = await scrape(app)
    labels = {"workspace": "acme", "agent": "assistant", "model": "claude-test-model"}
    for kind, n in (
        ("input", inp),
        ("output", out),
        ("cache_read", cread),
        ("cache_write", cwrite),
    ):
        assert value(samples, "switchboard_model_tokens_total", **labels, kind=kind) == n
    assert value(samples, "switchboard_model_calls_total", **labels) == calls
    assert abs((value(samples, "switchboard_model_cost_usd_total", **labels) or 0) - cost) < 1e-9
    assert len(anthropic_api.requests) == calls, "no call while held"

    # Approve spend: this one turn goes on past the limit, and finishes.
    model.stop = True
    telegram_api.push_callback(keyboard(to_alice)[0][0][1], user=ALICE, message=to_alice)
    await until(lambda: "Stopped looping." in chat(telegram_api, ALICE), wait_s=30)
    assert any(
        t.startswith("Going on: alice approved the spend") for t in chat(telegram_api, ALICE)
    )
    assert anthropic_api.refused == [] and telegram_api.refused == []
    [after] = await store.read_sql(SUMS)
    assert after["n"] == calls + 1
    assert json.dumps(anthropic_api.requests[-1]).count("keep checking until I say stop") == 1
