"""Telegram pacing end to end: python-telegram-bot against a fake Bot API that enforces
Telegram's limits (a message a second in a chat, twenty a minute in a group, thirty a second
for the bot) and tells the 429s it injected from those our pacing caused."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.adapters.telegram_harness import replies, start_app
from tests.fakes.anthropic_api import FakeAnthropic, text, tools
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until

pytestmark = pytest.mark.real_pacing  # the pacing itself is tried here


def working_then_answering(answer: Callable[[str], str], rounds: int = 1) -> Any:
    """A model that works (`rounds` sleep calls, so progress is shown: the message, edits,
    typing) and then answers the turn's prompt."""

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        prompts = [
            b["text"]
            for m in body["messages"]
            if m["role"] == "user"
            for b in m["content"]
            if b.get("type") == "text"
        ]
        done = sum(
            b.get("type") == "tool_result"
            for m in body["messages"][-2 * rounds :]
            for b in m["content"]
        )
        if done < rounds:
            return tools(("sleep", {"seconds": 0.6}))
        return text(answer(prompts[-1]))

    return respond


async def test_a_burst_under_injected_429s_draws_no_429_of_our_own(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    """Five DMs, each a turn that works a moment (progress: a message, edits, typing) and then
    replies, while three replies meet a 429: after each Retry-After nothing goes at once, the
    chat's one-a-second holds, and the progress is paced with the replies."""
    anthropic_api.responder = working_then_answering(
        lambda prompt: "re: " + prompt.split()[-1], rounds=3
    )
    telegram_api.fail(
        "sendMessage",
        429,
        "Too Many Requests: retry after 1",
        retry_after=1,
        times=3,
        when=lambda p: "reply_markup" not in p,
    )
    app = await start_app(db_path, anthropic_api, telegram_api, agent_tools=["sleep"])
    try:
        for i in range(5):
            telegram_api.push_message(f"msg {i}", user=1001)
            await until(lambda i=i: any(f"msg {i}" in str(r) for r in anthropic_api.requests))
            await app.runtime.wait_idle()
        await until(lambda: len(replies(telegram_api, 1001)) == 5, wait_s=30)
        await app.bridge.settle()
    finally:
        await app.stop()
    assert [m["text"] for m in replies(telegram_api, 1001)] == [f"re: {i}" for i in range(5)]
    assert telegram_api.sent("editMessageText") and telegram_api.sent("sendChatAction")
    assert telegram_api.injected_429 == 3
    assert telegram_api.self_caused == []


async def test_busy_forum_topics_keep_to_the_group_limit(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    """Three topics of one group busy at once, each with progress and a two-message answer:
    the group's 20 a minute (and a message a second) hold for all of it together. Each turn
    works long enough (five rounds, about 3 s) for the chat's message a second to leave room
    for all three progress messages before the first answer takes its turn."""
    lines = [f"{i:04d} " + "lorem ipsum dolor sit amet " * 3 for i in range(80)]
    anthropic_api.responder = working_then_answering(
        lambda prompt: prompt + "\n" + "\n".join(lines), rounds=5
    )
    app = await start_app(db_path, anthropic_api, telegram_api, agent_tools=["sleep"])
    try:
        for topic in (7, 8, 9):
            telegram_api.push_message(
                f"topic {topic}", user=1001, chat=-100, chat_type="supergroup", thread=topic
            )
        await until(lambda: len(replies(telegram_api, -100)) == 6, wait_s=40)
        await app.bridge.settle()
    finally:
        await app.stop()
    for topic in (7, 8, 9):
        got = [m["text"] for m in replies(telegram_api, -100) if m["message_thread_id"] == topic]
        received = [x.rstrip() for x in "\n".join(got).split("\n")]
        assert received == [f"topic {topic}", *(x.rstrip() for x in lines)]
    progress = [m for m in telegram_api.sent() if "reply_markup" in m]
    assert {m["message_thread_id"] for m in progress} == {7, 8, 9}, "progress shown too"
    assert telegram_api.self_caused == []


async def test_a_429_on_a_progress_edit_is_waited_out_and_the_reply_still_comes(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    refused_at: list[float] = []

    def first_edit(params: dict[str, Any]) -> bool:
        refused_at.append(time.monotonic())
        return True

    telegram_api.fail(
        "editMessageText", 429, "Too Many Requests: retry after 2", retry_after=2, when=first_edit
    )
    anthropic_api.responder = working_then_answering(lambda prompt: "done", rounds=8)
    app = await start_app(db_path, anthropic_api, telegram_api, agent_tools=["sleep"])
    try:
        telegram_api.push_message("work a while", user=1001)
        await until(lambda: bool(replies(telegram_api, 1001)), wait_s=20)
        await app.bridge.settle()
    finally:
        await app.stop()
    assert [m["text"] for m in replies(telegram_api, 1001)] == ["done"]
    [refused] = refused_at
    later = [c.at for c in telegram_api.calls if c.at > refused and c.method != "getUpdates"]
    assert later and min(later) >= refused + 2.0, "nothing more to that chat for 2 s"
    assert telegram_api.self_caused == []
