"""What recall adds to each turn, on GET /metrics over real HTTP (issue 40, must-have 8): the
real App against the fake Telegram and model; a turn of an agent that keeps memory is
observed with how many memories it was offered and about how many tokens they took."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from adapters.server.app import App
from tests.adapters import telegram_harness
from tests.adapters.telegram_harness import replies
from tests.adapters.test_metrics import scrape, value
from tests.fakes.anthropic_api import FakeAnthropic, text, tools
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until

ALICE = 1001
DEPLOY = "Our deploy window is Tuesdays 14:00 UTC"
HERE = {"workspace": "acme", "agent": "assistant"}


@pytest.fixture
async def app(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> AsyncIterator[App]:
    app = await telegram_harness.start_app(db_path, anthropic_api, telegram_api)
    yield app
    await app.stop()


async def test_each_turn_counts_the_memories_offered_and_their_tokens(
    app: App, telegram_api: FakeTelegram, anthropic_api: FakeAnthropic
) -> None:
    anthropic_api.script = [
        tools(("remember", {"text": DEPLOY})),
        text("Noted."),
        text("Tuesdays, 14:00 UTC."),
    ]
    telegram_api.push_message("Remember: our deploy window is Tuesdays 14:00 UTC", user=ALICE)
    await until(lambda: len(replies(telegram_api, ALICE)) == 1)
    telegram_api.push_message("When is the deploy window?", user=ALICE)
    await until(lambda: len(replies(telegram_api, ALICE)) == 2)
    await app.bridge.settle()
    m = await scrape(app)

    offered, tokens = "switchboard_memory_offered", "switchboard_memory_offered_tokens"
    assert value(m, f"{offered}_count", **HERE) == 2, "a turn each"
    assert value(m, f"{offered}_sum", **HERE) == 1, "the first recalled nothing, then the fact"
    assert value(m, f"{offered}_bucket", **HERE, le="0.0") == 1
    assert value(m, f"{tokens}_count", **HERE) == 2
    # The fact's line and the frame around it: tens of tokens, not none and not thousands.
    assert 10 < (value(m, f"{tokens}_sum", **HERE) or 0) < 200
    assert value(m, f"{tokens}_bucket", **HERE, le="0.0") == 1
