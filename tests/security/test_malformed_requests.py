"""Anyone who reaches the public port can send it bytes that are not HTTP: a folded header, a
TLS ClientHello on the plain port, garbage. Each gets a 400 (or a close), and the log says so
at most once a minute per client, at WARNING, without a traceback (aiohttp logged each at
ERROR with one: fifty such requests were some thousand lines). Over a raw socket against the
real port, on each topology (the door process, inline, a standby replica); the port still
answers afterwards."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path

import aiohttp
import pytest

from adapters.doors.malformed import LOGGER, MESSAGE, MalformedRequests
from tests.adapters.telegram_harness import start_app
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until
from tests.topology import Topology

FOLDED = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Folded: a\r\n b\r\n\r\n"
# The start of a TLS 1.2 ClientHello, as a browser sends it to https:// on this port.
CLIENT_HELLO = bytes.fromhex("16030100f4010000f00303") + bytes(32) + b"\x00\x00\x02\x13\x01"
GARBAGE = b"\x00\xff\xfe\x1b[2J\x7fnot http at all\r\n\r\n"
BAD = (FOLDED, CLIENT_HELLO, GARBAGE)


async def knock(port: int, data: bytes) -> None:
    """Send `data` on a connection of its own and read what comes back until it closes."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(data)
        await writer.drain()
        async with asyncio.timeout(10):
            while await reader.read(4096):
                pass
    except (ConnectionResetError, TimeoutError):
        pass
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError):
            await writer.wait_closed()


@pytest.fixture(autouse=True)
def _fresh_count() -> None:
    """Each test's server counts from nothing, as a process that starts does (one App of an
    earlier test in this process may have logged this client within the minute)."""
    logger = logging.getLogger(LOGGER)
    for found in [f for f in logger.filters if isinstance(f, MalformedRequests)]:
        logger.removeFilter(found)


def about_http(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "aiohttp.server"]


async def test_fifty_malformed_requests_are_one_warning_without_a_traceback(
    topology: Topology,
    db_path: Path,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)  # whatever aiohttp says, at any level, is seen
    app = await start_app(
        db_path, anthropic_api, telegram_api, webhook_secret="s3cret", topology=topology
    )
    try:
        for n in range(50):
            await knock(app.port, BAD[n % len(BAD)])
        async with (
            aiohttp.ClientSession() as http,
            http.get(f"http://127.0.0.1:{app.port}/healthz") as r,
        ):
            assert r.status == 200, "the port still answers"
        await until(lambda: bool(about_http(caplog)), wait_s=10)  # the door process's, over
    finally:
        await topology.stop()
    records = about_http(caplog)
    assert 1 <= len(records) <= 3, [r.getMessage() for r in records]
    for record in records:
        assert record.levelno == logging.WARNING and record.getMessage() == MESSAGE
        assert record.exc_info is None and "Traceback" not in str(record.__dict__)
        assert getattr(record, "remote", None) == "127.0.0.1"
    assert not any("Traceback" in r.getMessage() for r in caplog.records)
    assert not any(r.exc_info for r in caplog.records if r.levelno >= logging.WARNING)


def test_once_a_minute_per_client_saying_how_many_were_left_out() -> None:
    now = [0.0]
    malformed = MalformedRequests(clock=lambda: now[0])

    def bad(client: str) -> bool:
        from aiohttp.http_exceptions import BadStatusLine

        record = logging.LogRecord(
            "aiohttp.server", logging.ERROR, __file__, 1, "Error handling request from %s",
            (client,), (BadStatusLine, BadStatusLine("x"), None),
        )  # fmt: skip
        passed = malformed.filter(record)
        assert not passed or (record.levelno, record.exc_info) == (logging.WARNING, None)
        bad.last = record  # type: ignore[attr-defined]
        return passed

    assert bad("10.0.0.1") and bad("10.0.0.2")
    assert not any(bad("10.0.0.1") for _ in range(30))
    now[0] = 61.0
    assert bad("10.0.0.1")
    assert bad.last.left_out == 30 and bad.last.reason == "BadStatusLine"  # type: ignore[attr-defined]
    other = logging.LogRecord("aiohttp.server", logging.ERROR, __file__, 1, "x", (), None)
    assert malformed.filter(other) and other.levelno == logging.ERROR, "the rest as it was"
