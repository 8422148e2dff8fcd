"""Never lose the rest of a reply (issue 9): python-telegram-bot against the loopback fake Bot
API, with a 502, a refused connection, and an answer lost after the message was stored, in
the middle of a long answer. The Bot API cannot be asked whether a message landed, so what
may have landed is sent again: a repeated part, never a lost one."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from telegram.ext import Application

from adapters.server.app import App
from adapters.telegram.platform import TELEGRAM
from adapters.telegram.transport import TelegramTransport
from bridge.transport import DeliveryError, Post
from bridge.types import DeliveryKind, Route
from tests.adapters.telegram_harness import replies, start_app
from tests.fakes.anthropic_api import FakeAnthropic, text
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until

LINES = [f"{i:05d} " + "lorem ipsum dolor sit amet " * 3 for i in range(120)]  # 3 messages
ANSWER = "\n".join(LINES)


class Door:
    """A loopback TCP proxy in front of the fake. Shut, nothing listens on its port, so a
    connection is refused (and the ones open are cut), as when Telegram is unreachable."""

    def __init__(self, target_port: int) -> None:
        self._target = target_port
        self._server: asyncio.Server | None = None
        self._open: set[asyncio.StreamWriter] = set()
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def open(self) -> None:
        self._server = await asyncio.start_server(
            self._pipe, "127.0.0.1", self.port, reuse_address=True
        )
        self.port = self._server.sockets[0].getsockname()[1]

    async def shut(self) -> None:
        assert self._server is not None
        self._server.close()
        for writer in list(self._open):
            writer.close()
        await self._server.wait_closed()

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self._target)
        self._open.update((writer, up_writer))

        async def pump(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            with contextlib.suppress(ConnectionError, OSError):
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            dst.close()

        try:
            await asyncio.gather(pump(reader, up_writer), pump(up_reader, writer))
        finally:
            self._open.difference_update((writer, up_writer))


@pytest.fixture
async def door(telegram_api: FakeTelegram) -> AsyncIterator[Door]:
    door = Door(int(telegram_api.url.rsplit(":", 1)[1]))
    await door.open()
    yield door
    with contextlib.suppress(Exception):
        await door.shut()


@pytest.fixture
async def app(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> AsyncIterator[App]:
    app = await start_app(db_path, anthropic_api, telegram_api)
    yield app
    await app.stop()


def received_lines(telegram: FakeTelegram) -> list[str]:
    got = "\n".join(m["text"] for m in replies(telegram, 1001))
    return [line.rstrip() for line in got.split("\n")]


async def turn_results(app: App) -> list[dict[str, Any]]:
    return [
        {
            "status": i.status,
            "attempts": i.attempts,
            "chunks_sent": i.chunks_sent,
            "last_error": i.last_error,
        }
        for i in await app.bridge.store.intents()
        if i.kind is DeliveryKind.TURN_RESULT
    ]


def retries(caplog: pytest.LogCaptureFixture) -> list[tuple[int, str]]:
    """Each retry the outbox logged: the chunk, and whether it may have landed."""
    return [
        (r.chunk, r.landed)  # type: ignore[attr-defined]
        for r in caplog.records
        if r.getMessage() == "delivery retry"
    ]


def second_reply() -> Any:
    """A `when` for the fake: the second message of the reply (not the progress message)."""
    seen = 0

    def when(params: dict[str, Any]) -> bool:
        nonlocal seen
        if "reply_markup" in params:
            return False
        seen += 1
        return seen == 2

    return when


async def test_a_502_on_the_second_message_loses_no_word(
    app: App,
    telegram_api: FakeTelegram,
    anthropic_api: FakeAnthropic,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, "bridge.outbox")
    anthropic_api.script = [text(ANSWER)]
    telegram_api.fail("sendMessage", 502, "Bad Gateway", when=second_reply())
    telegram_api.push_message("long please", user=1001)
    await until(lambda: LINES[-1].rstrip() in received_lines(telegram_api), wait_s=20)
    await app.bridge.settle()
    assert received_lines(telegram_api) == [line.rstrip() for line in LINES], (
        "every word, in order: the 502 was not stored, so nothing repeats"
    )
    [row] = await turn_results(app)
    assert (row["status"], row["attempts"], row["chunks_sent"]) == ("accepted_by_transport", 1, 3)
    assert retries(caplog) == [(1, "unknown")], "may have landed: Telegram cannot be asked"
    assert telegram_api.self_caused == []


async def test_an_answer_lost_after_the_message_was_stored_is_sent_again(
    app: App,
    telegram_api: FakeTelegram,
    anthropic_api: FakeAnthropic,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, "bridge.outbox")
    """The fake stores the second message but answers after the client's read timeout: it
    is sent again (a repeated part), and the rest follows."""
    bot = app.live.bots("telegram")["acme"].application.bot
    bot.request._client.timeout = httpx.Timeout(5.0, read=1.0)  # type: ignore[attr-defined]
    anthropic_api.script = [text(ANSWER)]
    telegram_api.fail("sendMessage", 200, stall_s=2.0, when=second_reply())
    telegram_api.push_message("long please", user=1001)
    await until(lambda: LINES[-1].rstrip() in received_lines(telegram_api), wait_s=20)
    await app.bridge.settle()
    got = [m["text"] for m in replies(telegram_api, 1001)]
    assert len(got) == 4 and got[1] == got[2], "the part whose answer was lost, twice"
    once = [line.rstrip() for t in (got[0], got[1], got[3]) for line in t.split("\n")]
    assert once == [line.rstrip() for line in LINES], "and nothing lost, in order"
    [row] = await turn_results(app)
    assert (row["status"], row["attempts"], row["chunks_sent"]) == ("accepted_by_transport", 1, 3)
    assert retries(caplog) == [(1, "unknown")]
    assert telegram_api.self_caused == []


async def test_a_refused_connection_is_sent_again_once(
    db_path: Path,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    door: Door,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, "bridge.outbox")
    target = telegram_api.url
    telegram_api.url = door.url  # the bot reaches the fake through the door
    app = await start_app(db_path, anthropic_api, telegram_api)
    telegram_api.url = target
    try:
        anthropic_api.script = [text(ANSWER)]
        telegram_api.push_message("long please", user=1001)
        await until_row(app, lambda row: row["chunks_sent"] == 1)  # the first part answered
        await door.shut()  # before the second part goes (the chat's 1.1 s)
        await until_row(app, lambda row: row["attempts"] >= 1)
        await door.open()
        await until(lambda: LINES[-1].rstrip() in received_lines(telegram_api), wait_s=20)
        await app.bridge.settle()
        assert received_lines(telegram_api) == [line.rstrip() for line in LINES], (
            "every word once: the refused request never reached Telegram"
        )
        [row] = await turn_results(app)
        assert (row["status"], row["chunks_sent"]) == ("accepted_by_transport", 3)
        assert retries(caplog) and all(r == (1, "no") for r in retries(caplog)), (
            "the connection was refused: it certainly did not land"
        )
        assert telegram_api.self_caused == []
    finally:
        await app.stop()


async def until_row(app: App, condition: Any) -> None:
    for _ in range(2000):
        rows = await turn_results(app)
        if rows and condition(rows[0]):
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the delivery never got there")


async def test_what_certainly_did_not_leave_is_told_apart_from_what_may_have_landed(
    telegram_api: FakeTelegram, door: Door
) -> None:
    """How python-telegram-bot's errors map: a refused connection (httpx.ConnectError under
    NetworkError) never left; a 5xx and a read timeout (httpx.ReadTimeout under TimedOut)
    may have landed."""
    application = Application.builder().token(telegram_api.token).base_url(f"{door.url}/bot")
    application = application.read_timeout(1.0).build()
    await application.initialize()
    transport = TelegramTransport(application)
    route = Route(platform=TELEGRAM.name, workspace_id="acme", conversation_id="1001")

    async def send(chunk: int) -> DeliveryError:
        with pytest.raises(DeliveryError) as caught:
            await transport.send(Post(route, f"part {chunk}", DeliveryKind.TURN_RESULT, "i", chunk))
        return caught.value

    try:
        await door.shut()
        await asyncio.sleep(0.1)  # the pooled connection has seen its end
        refused = await send(0)
        assert (refused.landed, refused.retryable) == ("no", True)
        assert isinstance(refused.__cause__.__cause__, httpx.ConnectError)  # type: ignore[union-attr]
        await door.open()
        telegram_api.fail("sendMessage", 502, "Bad Gateway")
        assert (await send(1)).landed == "unknown"
        telegram_api.fail("sendMessage", 200, stall_s=1.5)
        timed_out = await send(2)
        assert timed_out.landed == "unknown" and "timed out" in str(timed_out).lower()
        assert [m["text"] for m in telegram_api.sent()] == ["part 2"], "stored, answer lost"
    finally:
        await application.shutdown()
