"""A slow client cannot hold the public port. A request whose line and headers are not all in
within a few seconds, or whose body is not, is closed (a body with a 408), however slowly it
trickles in: many such clients do not stop `/healthz` and the webhooks from answering (they held
their sockets for good, until a low file limit stopped the port answering anyone). A browser
that leaves the console's live page while it streams is not logged as an error.

The deadlines are patched down to a second here; the door process is given them as it starts."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from adapters.admin.pages import overview
from adapters.doors import slow_clients
from tests.adapters.telegram_harness import start_app
from tests.admin.harness import ACME_TOKEN, AdminClient, start_console
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram
from tests.topology import Topology

SECRET = "s3cret"
HEADERS_S = 1.0
BODY_S = 1.0
CLOSED_WITHIN_S = 6.0  # from the first byte: the deadline and time to spare on a busy machine
TRICKLE_S = 0.2  # one more byte this often: never enough, never idle


@pytest.fixture
def quick_deadlines(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(slow_clients, "HEADERS_S", HEADERS_S)
    monkeypatch.setattr(slow_clients, "BODY_S", BODY_S)


def update(update_id: int) -> bytes:
    return json.dumps(
        {
            "update_id": update_id,
            "message": {
                "message_id": update_id,
                "date": int(time.time()),
                "text": "hello",
                "chat": {"id": 1001, "type": "private"},
                "from": {"id": 1001, "is_bot": False, "first_name": "Alice"},
            },
        }
    ).encode()


def webhook_headers(length: int) -> bytes:
    return (
        "POST /telegram/acme HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"X-Telegram-Bot-Api-Secret-Token: {SECRET}\r\nContent-Length: {length}\r\n\r\n"
    ).encode()


# What a slow client has sent when it stops (or starts trickling): each is incomplete.
HALF_LINE = b"GET /heal"
HALF_HEADERS = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
HALF_BODY = webhook_headers(len(update(1))) + update(1)[:20]
HALF_CONSOLE_BODY = (
    b"POST /admin/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\ntoken="
)


class SlowClient:
    """A raw connection that sends the start of a request, then nothing more, or one byte at a
    time."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.trickling: asyncio.Task[None] | None = None

    @classmethod
    async def open(cls, port: int, start: bytes, *, trickle: bool = False) -> SlowClient:
        client = cls(*await asyncio.open_connection("127.0.0.1", port))
        client.writer.write(start)
        await client.writer.drain()
        if trickle:
            client.trickling = asyncio.create_task(client._trickle())
        return client

    async def _trickle(self) -> None:
        with contextlib.suppress(ConnectionError):
            while not self.writer.is_closing():
                await asyncio.sleep(TRICKLE_S)
                self.writer.write(b"a")
                await self.writer.drain()

    async def answer(self) -> bytes:
        """What the server sends before it closes: nothing, or its answer's first bytes."""
        try:
            return await self.reader.read(64)
        except ConnectionResetError:
            return b""

    def close(self) -> None:
        if self.trickling is not None:
            self.trickling.cancel()
        self.writer.close()


@contextlib.asynccontextmanager
async def slow_clients_on(
    port: int, *starts: tuple[bytes, int, bool]
) -> AsyncIterator[list[SlowClient]]:
    """`count` clients for each (start, count, trickle), connected at once."""
    clients = [
        await SlowClient.open(port, start, trickle=trickle)
        for start, count, trickle in starts
        for _ in range(count)
    ]
    try:
        yield clients
    finally:
        for client in clients:
            client.close()


async def test_slow_clients_are_closed_and_the_port_answers_the_rest(
    topology: Topology,
    quick_deadlines: None,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
) -> None:
    app = await start_app(
        Path("unused"), anthropic_api, telegram_api, webhook_secret=SECRET, topology=topology
    )
    no_headers = [(HALF_LINE, 20, False), (HALF_HEADERS, 20, False), (HALF_HEADERS, 2, True)]
    no_body = [(HALF_BODY, 10, False), (HALF_BODY, 2, True), (HALF_CONSOLE_BODY, 5, False)]
    async with (
        slow_clients_on(app.port, *no_headers) as cut_short,
        slow_clients_on(app.port, *no_body) as timed_out,
    ):
        async with asyncio.timeout(CLOSED_WITHIN_S):
            cut = await asyncio.gather(*(client.answer() for client in cut_short))
            answered = await asyncio.gather(*(client.answer() for client in timed_out))
        assert cut == [b""] * len(cut_short), "closed: there is no request to answer"
        for answer in answered:
            assert answer == b"" or answer.startswith(b"HTTP/1.1 408 "), answer
        async with aiohttp.ClientSession() as http:
            base = f"http://127.0.0.1:{app.port}"
            async with http.get(f"{base}/healthz") as health:
                assert health.status == 200
            headers = {"X-Telegram-Bot-Api-Secret-Token": SECRET}
            async with http.post(f"{base}/telegram/acme", data=update(2), headers=headers) as hook:
                assert hook.status == 200


async def test_a_whole_request_sent_in_pieces_in_time_is_answered(
    topology: Topology,
    quick_deadlines: None,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
) -> None:
    app = await start_app(
        Path("unused"), anthropic_api, telegram_api, webhook_secret=SECRET, topology=topology
    )
    body = update(3)
    client = await SlowClient.open(app.port, webhook_headers(len(body))[:30])
    try:
        for piece in (webhook_headers(len(body))[30:], body[:10], body[10:]):
            await asyncio.sleep(HEADERS_S / 4)
            client.writer.write(piece)
        async with asyncio.timeout(CLOSED_WITHIN_S):
            assert (await client.answer()).startswith(b"HTTP/1.1 200")
    finally:
        client.close()


async def test_a_client_hanging_up_mid_request_is_not_an_error(
    topology: Topology,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING)
    app = await start_app(
        Path("unused"), anthropic_api, telegram_api, webhook_secret=SECRET, topology=topology
    )
    async with slow_clients_on(app.port, (HALF_BODY, 3, False), (HALF_CONSOLE_BODY, 3, False)):
        await asyncio.sleep(0.2)  # the servers are reading the bodies
    await asyncio.sleep(1.0)  # and have seen the clients go (the door process has said so)
    assert errors(caplog) == []


def errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [f"{r.name}: {r.getMessage()}" for r in caplog.records if r.levelno >= logging.ERROR]


async def test_a_browser_leaving_the_live_page_is_not_an_error(
    console_topology: Topology,
    monkeypatch: pytest.MonkeyPatch,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    slack_api: FakeSlack,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The stream writes often, so that both ends notice the browser gone within the test.
    monkeypatch.setattr(overview, "KEEPALIVE_S", 0.05)
    monkeypatch.setattr(overview, "RECHECK_S", 0.05)
    caplog.set_level(logging.WARNING)
    app = await start_console(
        Path("unused"), anthropic_api, telegram_api, slack_api, topology=console_topology
    )
    async with AdminClient(app) as client:
        await client.login(ACME_TOKEN)
        for _ in range(3):
            stream = await client.http.get(
                client.base + "/admin/w/acme/live", headers={"Accept": "text/event-stream"}
            )
            line = await asyncio.wait_for(stream.content.readline(), 10)
            while line.startswith(b":") or line == b"\n":  # a keepalive may come first
                line = await asyncio.wait_for(stream.content.readline(), 10)
            assert line.startswith(b"data: "), line
            stream.connection.transport.abort()  # the browser goes: the tab is closed
            stream.release()
        await asyncio.sleep(1.0)  # twenty keepalives: each end has written to a closed one
        status, _ = await client.get("/admin/w/acme/")
        assert status == 200
    assert errors(caplog) == []
