"""A full memory tells the primary operator (issue 40, must-have 7), through `switchboard run`
with the fake Telegram and model: keeping one more memory in a full scope removes the least
used and oldest, and the primary operator's chat says which agent, which memory, its limit,
the ids removed (never their text) and how to keep more; once, even when the event is handled
again or the memory stays full that day."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from adapters.server.app import App
from runtime.events import EventType
from tests.adapters.telegram_harness import replies, start_app
from tests.fakes.anthropic_api import FakeAnthropic, text, tools
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until

ALICE = 1001  # the primary operator of acme, in her DM
LUNCH = "Lunch is at noon."


def notices(telegram: FakeTelegram) -> list[str]:
    return [
        m["text"] for m in replies(telegram, ALICE) if "memory" in m["text"] and "full" in m["text"]
    ]


async def say(telegram: FakeTelegram, words: str, answers: int) -> None:
    telegram.push_message(words, user=ALICE)
    await until(
        lambda: len([m for m in replies(telegram, ALICE) if m["text"] == "Noted."]) >= answers
    )


@pytest.fixture
async def app(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> AsyncIterator[App]:
    """Each operator's memory of an agent holds one (`[workspaces.memory] operator_limit`)."""
    memory = {"memory": {"agent_limit": 5, "operator_limit": 1}}
    app = await start_app(db_path, anthropic_api, telegram_api, acme_extra=memory)
    yield app
    await app.stop()


async def test_a_full_memory_tells_the_primary_operator_once(
    app: App, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    anthropic_api.script = [
        tools(("remember", {"text": LUNCH})),
        text("Noted."),
        tools(("remember", {"text": "Standup is at nine."})),
        text("Noted."),
        tools(("remember", {"text": "Payroll runs on the 25th."})),
        text("Noted."),
    ]
    await say(telegram_api, "Remember: lunch is at noon.", 1)
    assert notices(telegram_api) == [], "not full yet"
    [lunch] = [m.id for m in await app.bridge.runtime.memories.export("acme/assistant")]

    await say(telegram_api, "Remember: standup is at nine.", 2)
    await until(lambda: len(notices(telegram_api)) == 1)
    [notice] = notices(telegram_api)
    assert "acme/assistant" in notice and "alice" in notice, notice
    assert "full: it keeps at most 1." in notice and f"(1): {lunch}." in notice, notice
    assert "operator_limit" in notice and "[workspaces.memory]" in notice, notice
    assert "/memory" in notice and "/forget" in notice, notice
    assert LUNCH not in notice, "the removed memory's text is gone: never told"

    # The same event handled again (a restart before the cursor moved) tells nothing more.
    [evicted] = await app.bridge.runtime.store.read_sql(
        "SELECT seq FROM events WHERE type = ?", (EventType.MEMORY_EVICTED,)
    )
    [event] = await app.bridge.runtime.store.events_after(int(evicted["seq"]) - 1, limit=1)
    await app.bridge.dispatcher.handle(event)
    # Full again the same day: the memory goes on making room, told once a day.
    await say(telegram_api, "Remember: payroll runs on the 25th.", 3)
    await app.bridge.settle()
    assert len(notices(telegram_api)) == 1, notices(telegram_api)
    assert anthropic_api.refused == []
