"""/memory and /forget in Telegram (issue 40): in alice's DM /memory lists what she told the
agent to keep for her alone, with its id, scope, date and source, and a Forget button whose
press forgets it; in a group she talks to the agent in, /memory lists the agent's memories
but never her private one, and /forget there cannot reach it. Through the real App,
python-telegram-bot and the fake Bot API."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from adapters.server.app import App
from runtime.memory_values import Audience, MemoryScope, MemorySource
from tests.adapters.telegram_harness import start_app
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until

ALICE, GROUP = 1001, -100
AGENT = "acme/assistant"
PRIVATE = "Alice's daughter is called Maya"
SHARED = "Our deploy window is Tuesdays 14:00 UTC"


def keyboard(message: dict[str, Any]) -> list[tuple[str, str]]:
    """The buttons under a posted message: (label, callback data)."""
    markup = message.get("reply_markup") or {}
    markup = json.loads(markup) if isinstance(markup, str) else markup
    return [(b["text"], b["callback_data"]) for row in markup["inline_keyboard"] for b in row]


async def answer_to(telegram: FakeTelegram, text: str, chat: int) -> dict[str, Any]:
    """Send `text` as alice in `chat`; the bot's next message there, as posted."""
    before = max(telegram.posted, default=0)
    if chat == ALICE:
        telegram.push_message(text, user=ALICE)
    else:
        telegram.push_message(text, user=ALICE, chat=chat, chat_type="group")

    def answered() -> list[dict[str, Any]]:
        return [m for i, m in telegram.posted.items() if i > before and m["chat"]["id"] == chat]

    await until(lambda: bool(answered()), wait_s=20)
    return answered()[0]


async def seed(app: App) -> tuple[str, str]:
    memories = app.runtime.memories
    mine = await memories.remember(
        Audience(AGENT, "alice", True),
        PRIVATE,
        MemoryScope.OPERATOR,
        session_id=None,
        message_id=None,
        source=MemorySource.OPERATOR,
        key="seed-private",
    )
    ours = await memories.remember(
        Audience(AGENT, "alice", False),
        SHARED,
        None,
        session_id=None,
        message_id=None,
        source=MemorySource.QUOTE,
        key="seed-shared",
    )
    return mine.memory.id, ours.memory.id


async def test_memory_in_a_dm_lists_and_forgets_and_a_group_never_sees_the_private_one(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    app = await start_app(db_path, anthropic_api, telegram_api)
    try:
        mine, ours = await seed(app)
        today = datetime.now(UTC).strftime("%Y-%m-%d")

        dm = await answer_to(telegram_api, "/memory", ALICE)
        assert f"\u2022 {mine} (yours alone, {today}, an operator's words): {PRIVATE}" in dm["text"]
        assert (
            f"\u2022 {ours} (the whole workspace, {today}, a quote or forward): {SHARED}"
            in (dm["text"])
        )
        buttons = keyboard(dm)
        assert len(buttons) == 2 and all(label.startswith("Forget") for label, _ in buttons)

        group = await answer_to(telegram_api, "/memory", GROUP)
        assert SHARED in group["text"] and ours in group["text"]
        assert PRIVATE not in group["text"] and mine not in group["text"]
        assert len(keyboard(group)) == 1, "one Forget button: the agent's memory only"
        refused = await answer_to(telegram_api, f"/forget {mine}", GROUP)
        assert refused["text"] == f"No memory {mine} that this chat may see: nothing was forgotten."
        searched = await answer_to(telegram_api, "/memory Maya", GROUP)
        assert PRIVATE not in searched["text"]

        found = await answer_to(telegram_api, "/memory Maya", ALICE)
        assert found["text"].startswith("Memories matching \u201cMaya\u201d (1):")
        [(label, data)] = keyboard(found)
        assert label == "Forget \u201cAlice's daughter is cal\u2026\u201d"
        before = max(telegram_api.posted)
        telegram_api.push_callback(data, user=ALICE, message=found)
        await until(lambda: max(telegram_api.posted) > before, wait_s=20)
        said = telegram_api.posted[max(telegram_api.posted)]["text"]
        assert said.startswith(f"Forgotten: {mine}")
        assert await app.runtime.memories.one(AGENT, mine) is None
        after = await answer_to(telegram_api, "/memory", ALICE)
        assert PRIVATE not in after["text"] and SHARED in after["text"]
    finally:
        await app.stop()


async def test_a_button_pressed_before_its_message_is_recorded_still_works(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    """Telegram shows a message as its sendMessage is done; Switchboard records it once the
    answer is back. Alice presses Forget in between (here: the answer 1.5 s late), and the
    press does what the button says, not "that button no longer works": it names its
    delivery, written before the send."""
    app = await start_app(db_path, anthropic_api, telegram_api)
    try:
        mine, _ = await seed(app)
        telegram_api.fail(
            "sendMessage", 200, stall_s=1.5, when=lambda p: "Memories matching" in p["text"]
        )
        found = await answer_to(telegram_api, "/memory Maya", ALICE)
        [(_, data)] = keyboard(found)
        before = max(telegram_api.posted)
        telegram_api.push_callback(data, user=ALICE, message=found)  # while the answer stalls
        await until(lambda: max(telegram_api.posted) > before, wait_s=20)
        said = telegram_api.posted[max(telegram_api.posted)]["text"]
        assert said.startswith(f"Forgotten: {mine}")
        assert await app.runtime.memories.one(AGENT, mine) is None
    finally:
        await app.stop()
