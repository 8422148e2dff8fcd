"""A /stop while an answer streams as a draft in a Telegram DM draws no 429 of our own: the
command's "Stopped." and the stopped answer's edit keep the chat's one message a second. (The
edit was paced as a draft's stream, which is no message in a DM: it followed "Stopped." in a
third of a second.)"""

from __future__ import annotations

import asyncio
from pathlib import Path

from bridge import texts
from tests.adapters.telegram_harness import replies, start_app
from tests.fakes.anthropic_api import FakeAnthropic, text
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until


async def test_a_stop_mid_stream_in_a_dm_keeps_the_chats_pace(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    hold = asyncio.Event()
    anthropic_api.script = [text("The first words of it.", hold=hold)]
    app = await start_app(db_path, anthropic_api, telegram_api)
    try:
        telegram_api.push_message("explain", user=1001)
        await until(lambda: bool(telegram_api.sent("sendMessageDraft")))
        telegram_api.push_message("/stop", user=1001)
        await until(lambda: any(m["text"] == texts.STOPPED for m in replies(telegram_api, 1001)))
        await until(lambda: any(texts.STREAM_STOPPED in t for t in telegram_api.chat(1001)))
        assert telegram_api.self_caused == [], "the stopped answer's edit came too soon"
    finally:
        hold.set()
        await app.stop()
