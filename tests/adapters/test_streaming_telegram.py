"""Streamed answers on Telegram (issue 12): python-telegram-bot against the fake Bot API,
which enforces Telegram's flood limits and keeps what a user would see (the bot's messages,
and drafts until a message replaces them or 30 s pass). The model is held half-way through
its answer, so what the chat shows mid-stream can be looked at."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from adapters.server.app import App
from bridge import texts
from runtime.events import EventType
from tests.adapters.crash import crash
from tests.adapters.telegram_harness import replies, start_app
from tests.fakes.anthropic_api import FakeAnthropic, Reply, text
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until, wait_for

pytestmark = pytest.mark.real_pacing  # streams and progress run at the platforms' own pace

FIRST, SECOND = "The first half of the answer, ", "and the second half."
ANSWER = FIRST + SECOND
GROUP = -100


def halted(first: str = FIRST, second: str = SECOND) -> tuple[Reply, asyncio.Event]:
    """An answer whose stream stops after its first block until the event is set."""
    hold = asyncio.Event()
    blocks = [{"type": "text", "text": first}, {"type": "text", "text": second}]
    return Reply(blocks=blocks, hold=hold), hold


@pytest.fixture
async def app(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> AsyncIterator[App]:
    app = await start_app(db_path, anthropic_api, telegram_api)
    yield app
    await app.stop()


def drafts(telegram: FakeTelegram) -> list[str]:
    return [d["text"] for d in telegram.sent("sendMessageDraft")]


def edits(telegram: FakeTelegram) -> list[str]:
    return [e["text"] for e in telegram.sent("editMessageText")]


def assert_clean(telegram: FakeTelegram) -> None:
    assert telegram.refused == [] and telegram.self_caused == []
    assert telegram.live_drafts() == {}, "no draft left behind"


async def test_a_dm_answer_streams_as_drafts_then_lands_once(
    app: App, telegram_api: FakeTelegram, anthropic_api: FakeAnthropic
) -> None:
    reply, hold = halted()
    anthropic_api.script = [reply]
    telegram_api.push_message("explain", user=1001)
    await until(lambda: any(FIRST.strip() in d for d in drafts(telegram_api)))
    assert replies(telegram_api, 1001) == [], "the answer is not sent before it is finished"
    assert telegram_api.live_drafts() == {(1001, None): FIRST.strip()}  # as Telegram shows it
    hold.set()
    await until(lambda: bool(replies(telegram_api, 1001)))
    await app.bridge.settle()
    await until(lambda: len(telegram_api.chat(1001)) == 1)
    assert telegram_api.chat(1001) == [ANSWER], "the answer once, the progress message gone"
    assert [m["text"] for m in replies(telegram_api, 1001)] == [ANSWER]
    assert_clean(telegram_api)


async def test_a_group_answer_streams_in_one_edited_message_then_lands_once(
    app: App, telegram_api: FakeTelegram, anthropic_api: FakeAnthropic
) -> None:
    reply, hold = halted()
    anthropic_api.script = [reply]
    telegram_api.push_message("explain", user=1001, chat=GROUP, chat_type="supergroup")
    await until(lambda: any(FIRST.strip() in e for e in edits(telegram_api)))
    [live] = telegram_api.chat(GROUP)
    assert live.startswith(FIRST.strip()) and "\u23f3" in live, "answer and status, one message"
    hold.set()
    await until(lambda: telegram_api.chat(GROUP) == [ANSWER])
    assert telegram_api.sent("sendMessageDraft") == [], "no drafts outside private chats"
    assert [m["text"] for m in replies(telegram_api, GROUP)] == [ANSWER]
    assert_clean(telegram_api)


async def test_a_long_answer_streams_its_newest_part_and_lands_whole_split_at_the_limit(
    app: App, telegram_api: FakeTelegram, anthropic_api: FakeAnthropic
) -> None:
    lines = [f"{i:05d} " + "lorem ipsum dolor sit amet " * 3 for i in range(120)]
    first, second = "\n".join(lines[:60]) + "\n", "\n".join(lines[60:])
    reply, hold = halted(first, second)
    anthropic_api.script = [reply]
    telegram_api.push_message("long please", user=1001)
    await until(lambda: any("00059" in d for d in drafts(telegram_api)))
    assert all(len(d) <= 4096 for d in drafts(telegram_api))
    assert "00000" not in drafts(telegram_api)[-1], "the newest part is shown"
    hold.set()
    await until(lambda: "00119" in "".join(telegram_api.chat(1001)), wait_s=20)
    await until(lambda: len(telegram_api.chat(1001)) == 3)
    got = telegram_api.chat(1001)
    assert all(len(t) <= 4096 for t in got)
    assert [line.rstrip() for line in "\n".join(got).split("\n")] == [
        line.rstrip() for line in lines
    ]
    assert_clean(telegram_api)


async def test_stop_mid_stream_leaves_the_partial_answer_saying_it_was_stopped(
    app: App, telegram_api: FakeTelegram, anthropic_api: FakeAnthropic
) -> None:
    reply, hold = halted()
    anthropic_api.script = [reply]
    telegram_api.push_message("explain", user=1001, chat=GROUP, chat_type="supergroup")
    await until(lambda: any(FIRST.strip() in e for e in edits(telegram_api)))
    telegram_api.push_message("/stop", user=1001, chat=GROUP, chat_type="supergroup")
    await until(lambda: any(texts.STREAM_STOPPED in t for t in telegram_api.chat(GROUP)))
    hold.set()
    await app.bridge.settle()
    shown = telegram_api.chat(GROUP)
    [partial] = [t for t in shown if texts.STREAM_STOPPED in t]
    assert partial.startswith(FIRST.strip()), "the words that came, marked stopped"
    assert not any(SECOND in t for t in shown), "no answer after the stop"
    last = telegram_api.sent("editMessageText")[-1]
    assert "reply_markup" not in last, "no Stop button on a stopped answer"
    assert_clean(telegram_api)


async def test_an_interjection_mid_stream_reaches_the_agent_and_one_answer_lands(
    app: App, telegram_api: FakeTelegram, anthropic_api: FakeAnthropic
) -> None:
    reply, hold = halted()
    final = "Taking your note into account: done."
    anthropic_api.script = [reply, text(final)]
    telegram_api.push_message("explain", user=1001, chat=GROUP, chat_type="supergroup")
    await until(lambda: any(FIRST.strip() in e for e in edits(telegram_api)))
    telegram_api.push_message("keep it short", user=1001, chat=GROUP, chat_type="supergroup")
    await wait_for(
        app.runtime, EventType.MESSAGE_QUEUED, lambda e: e.data.status == "waiting_for_safe_point"
    )
    hold.set()
    admitted = await wait_for(app.runtime, EventType.OPERATOR_INTERJECTION_ADMITTED)
    assert admitted.data.boundary == "after_provider_round"
    await until(lambda: telegram_api.chat(GROUP) == [final])
    await app.bridge.settle()
    assert telegram_api.chat(GROUP) == [final], "one answer: the turn's last round's"
    assert "keep it short" in str(anthropic_api.requests[1]["messages"][-1])
    assert_clean(telegram_api)


async def test_a_crash_mid_stream_ends_with_the_answer_once_and_no_preview_left(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    reply, hold = halted()
    anthropic_api.script = [reply]
    app = await start_app(db_path, anthropic_api, telegram_api)
    telegram_api.push_message("explain", user=1001, chat=GROUP, chat_type="supergroup")
    await until(lambda: any(FIRST.strip() in e for e in edits(telegram_api)))
    await crash(app)
    [left] = telegram_api.chat(GROUP)
    assert left.startswith(FIRST.strip()), "the crash left a half-streamed preview"
    hold.set()
    anthropic_api.script = [text(ANSWER)]  # the interrupted turn runs again
    await asyncio.sleep(1.0)  # a process starts again no sooner than the chat's second is over
    app = await start_app(db_path, anthropic_api, telegram_api)
    try:
        shown = [texts.RESUMED_ANSWER.format(answer=ANSWER)]  # told it went on, in one message
        await until(lambda: telegram_api.chat(GROUP) == shown)
        await app.bridge.settle()
        assert telegram_api.chat(GROUP) == shown
        assert [m["text"] for m in replies(telegram_api, GROUP)] == shown
        assert_clean(telegram_api)
    finally:
        await app.stop()


async def test_a_crash_inside_an_update_leaves_no_progress_message_it_had_posted(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    """A progress message is recorded as its post returns, not when the whole update is done:
    a crash while the same update's next call (the answer's draft) is under way leaves nothing
    of it in the chat once the process is back."""
    reply, hold = halted()
    anthropic_api.script = [reply]
    app = await start_app(db_path, anthropic_api, telegram_api)
    telegram_api.push_message("explain", user=1001)
    await until(lambda: any(FIRST.strip() in d for d in drafts(telegram_api)), 30)
    await until(lambda: len(telegram_api.chat(1001)) == 1)
    # The user deletes the progress message: the next update's edit finds it gone, and the
    # one after posts it again and sends the draft again, which Telegram holds.
    [(first, _)] = telegram_api.shown[1001].items()
    del telegram_api.shown[1001][first]
    drafting = telegram_api.gate("sendMessageDraft")
    await until(lambda: len(drafts(telegram_api)) == 2, 30)
    [(second, progress)] = telegram_api.shown[1001].items()
    assert second != first and progress.startswith("\u23f3"), "posted again, by that update"
    await crash(app)
    drafting.set()  # the draft Telegram held shows, until a message takes its place
    hold.set()
    anthropic_api.script = [text(ANSWER)]  # the interrupted turn runs again
    await asyncio.sleep(1.0)  # a process starts again no sooner than the chat's second is over
    app = await start_app(db_path, anthropic_api, telegram_api)
    try:
        shown = [texts.RESUMED_ANSWER.format(answer=ANSWER)]
        await until(lambda: telegram_api.chat(1001) == shown, 30)
        await app.bridge.settle()
        assert telegram_api.chat(1001) == shown, "the answer once; the progress message gone"
        assert_clean(telegram_api)
    finally:
        await app.stop()


async def test_a_retried_answer_streams_afresh_not_after_the_failed_attempts_words(
    app: App, telegram_api: FakeTelegram, anthropic_api: FakeAnthropic
) -> None:
    """The first attempt streams half an answer and the API fails mid-stream (overloaded):
    the draft of the retry shows the retry's words only, never both attempts' run together."""
    failed = Reply(blocks=[{"type": "text", "text": FIRST}], stream_error="overloaded_error")
    retry, hold = halted("Fresh start, ", "then the rest.")
    anthropic_api.script = [failed, retry]
    telegram_api.push_message("explain", user=1001)
    await until(lambda: any("Fresh start" in d for d in drafts(telegram_api)), 20)
    assert telegram_api.live_drafts() == {(1001, None): "Fresh start,"}, "the failed words stay"
    hold.set()
    await until(lambda: bool(replies(telegram_api, 1001)), 20)
    assert [m["text"] for m in replies(telegram_api, 1001)] == ["Fresh start, then the rest."]
