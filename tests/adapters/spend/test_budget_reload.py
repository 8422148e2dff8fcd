"""An admin raises a limit while a turn waits on it (issue 32): the edited file, reloaded, lets
the held turn go on at once, and its conversation is told why."""

from __future__ import annotations

from pathlib import Path

from tests.adapters.spend.test_budget_e2e import OPERATORS, Looping
from tests.adapters.telegram_harness import start_app
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until

ALICE = 1001
BUDGET = {"scope": "operator", "id": "alice", "period": "month", "limit_tokens": 24_680}


async def test_a_limit_raised_by_reload_lets_the_held_turn_go_on(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    model = Looping()
    anthropic_api.responder = model
    extra = {"operators": OPERATORS, "budgets": [BUDGET]}
    app = await start_app(
        db_path, anthropic_api, telegram_api, agent_tools=("sleep",), acme_extra=extra
    )
    try:
        telegram_api.push_message("keep going", user=ALICE)
        held = "Paused before the next model call: it would pass operator alice's monthly budget"
        await until(lambda: any(t.startswith(held) for t in telegram_api.chat(ALICE)), wait_s=30)
        calls = len(anthropic_api.requests)
        started = len(telegram_api.sent("getMe"))
        assert started >= 1

        assert app.path is not None
        app.path.write_text(app.path.read_text().replace("24680", "24680000"))
        model.stop = True
        report = await app.reload()
        assert report.ok and report.changed == ("acme",), report
        assert len(telegram_api.sent("getMe")) == started, "the bot was not restarted for it"
        await until(lambda: "Stopped looping." in telegram_api.chat(ALICE), wait_s=20)
        assert "Going on: the budget allows it again." in telegram_api.chat(ALICE)
        assert len(anthropic_api.requests) == calls + 1
    finally:
        await app.stop()
