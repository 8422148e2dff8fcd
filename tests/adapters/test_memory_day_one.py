"""Issue 40's 'done when', as Alice lives it on every topology of `switchboard run`: a fact she
tells the agent on day one is kept, outlives several compactions of her conversation, a /new
and a restart of Switchboard, and is offered with her question in the new session. Her dozen
replies follow one another in one chat: Telegram's second between them is shortened
(`tests/adapters/fast_pacing.py`)."""

from __future__ import annotations

from bridge import texts
from runtime.memory_flush import FLUSH_REQUEST
from tests.adapters.telegram_harness import replies, start_app
from tests.adapters.test_memory_telegram import DEPLOY, offered_in
from tests.fakes.anthropic_api import FakeAnthropic, text, tools
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until
from tests.topology import Topology

ALICE = 1001
COMPACTIONS = 3


def said(telegram: FakeTelegram) -> list[str]:
    return [m["text"] for m in replies(telegram, ALICE)]


async def test_a_fact_told_on_day_one_outlives_compactions_new_and_a_restart(
    topology: Topology,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
) -> None:
    anthropic_api.script = [tools(("remember", {"text": DEPLOY})), text("Noted.")]
    for n in range(COMPACTIONS):
        # a day's chat, then /compact: the flush (nothing new to keep), then the summary
        anthropic_api.script += [text(f"Answer {n}."), text("done"), text(f"Summary {n}.")]
    anthropic_api.script += [text("done"), text("Tuesdays, 14:00 UTC.")]  # /new's flush, then

    await start_app(topology.folder / "unused.db", anthropic_api, telegram_api, topology=topology)
    telegram_api.push_message("Remember: our deploy window is Tuesdays 14:00 UTC", user=ALICE)
    await until(lambda: "Noted." in said(telegram_api))
    for n in range(COMPACTIONS):
        telegram_api.push_message(f"Question {n}?", user=ALICE)
        await until(lambda n=n: f"Answer {n}." in said(telegram_api))
        telegram_api.push_message("/compact", user=ALICE)
        done = n + 1
        await until(lambda done=done: sum("Summarized" in s for s in said(telegram_api)) == done)
    telegram_api.push_message("/new", user=ALICE)
    await until(lambda: any(texts.NEW_SESSION in s for s in said(telegram_api)))
    await until(lambda: len(anthropic_api.requests) == 2 + 3 * COMPACTIONS + 1)

    await topology.stop()
    await topology.start(topology.folder / "switchboard.toml")
    telegram_api.push_message("When is the deploy window?", user=ALICE)
    await until(lambda: "Tuesdays, 14:00 UTC." in said(telegram_api), 30)

    flushes = [r for r in anthropic_api.requests if FLUSH_REQUEST in str(r["messages"][-1])]
    assert len(flushes) == COMPACTIONS + 1, "a flush before each compaction and before /new"
    asked = anthropic_api.requests[-1]
    assert len(asked["messages"]) == 1, "a fresh session"
    assert DEPLOY in offered_in(asked), "the day-one fact was not offered"
    assert anthropic_api.refused == []
