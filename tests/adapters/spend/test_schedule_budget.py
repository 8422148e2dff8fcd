"""A schedule's own budget (issue 32): the run that would pass it stops before the model call,
the schedule is paused (not the workspace: alice's own turns go on), and the primary
operator is told which schedule, why, and how to resume it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.adapters.spend.test_budget_e2e import BOB, OPERATORS
from tests.adapters.telegram_harness import start_app
from tests.fakes.anthropic_api import FakeAnthropic, Reply, text, tools
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until

ALICE = 1001
DIGEST = {"id": "digest", "agent": "assistant", "every": "1h", "prompt": "Write the digest."}
BUDGET = {"scope": "schedule", "id": "digest", "period": "day", "limit_tokens": 3000}


def model(body: dict[str, Any]) -> Reply:
    if "Write the digest." in str(body["messages"]):
        # A long first answer: the next call is estimated as long, and would pass the budget.
        return tools(("sleep", {"seconds": 0}), say="Digest notes. " * 450)
    return text("Hello alice.")


async def test_a_schedule_at_its_limit_is_paused_and_the_primary_told(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    anthropic_api.responder = model
    extra = {"operators": OPERATORS, "schedules": [DIGEST], "budgets": [BUDGET]}
    app = await start_app(
        db_path, anthropic_api, telegram_api, agent_tools=("sleep",), acme_extra=extra
    )
    try:
        await app.bridge.automations.run_now("acme", "digest", "alice")
        paused = "Schedule digest is paused, its run stopped before the next model call"
        await until(lambda: any(t.startswith(paused) for t in telegram_api.chat(BOB)), wait_s=20)
        [told] = [t for t in telegram_api.chat(BOB) if t.startswith(paused)]
        assert "schedule digest's daily budget of 3,000 tokens" in told
        assert "/schedules resume digest" in told
        assert len(anthropic_api.requests) == 1, "the call that would pass it was not made"
        [view] = await app.bridge.automations.schedules("acme")
        assert view.paused_by == "budget"

        telegram_api.push_message("hi", user=ALICE)  # the workspace is not paused
        await until(lambda: "Hello alice." in telegram_api.chat(ALICE))
        assert anthropic_api.refused == [] and telegram_api.refused == []
    finally:
        await app.stop()
