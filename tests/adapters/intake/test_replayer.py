"""Stored requests handed to the platforms' decoders (`adapters/intake/replay.Replayer`): in the
order they came within a conversation, conversations side by side, each handled one time and
then gone from the store."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

import pytest

from adapters.intake.record import NotReady
from adapters.intake.replay import Replayer
from bridge.store.records import StoredRequest
from tests.runtime.helpers import until


class Source:
    def __init__(self, requests: list[StoredRequest]) -> None:
        self.waiting = list(requests)
        self.failures: list[tuple[int, str]] = []

    async def put(self, arrival: object) -> bool:
        raise AssertionError("the replayer stores nothing")

    async def pending(self, after_id: int, limit: int) -> list[StoredRequest]:
        return [r for r in self.waiting if r.id > after_id][:limit]

    async def done(self, ids: list[int]) -> None:
        self.waiting = [r for r in self.waiting if r.id not in ids]

    async def failed(self, request_id: int, error: str) -> None:
        self.failures.append((request_id, error))


class Decoder:
    platform = "slack"

    def __init__(self, decode: Callable[[StoredRequest], Awaitable[None]]) -> None:
        self.decode = decode


def request(id: int, place: str) -> StoredRequest:
    return StoredRequest(id, "slack", "acme", f"body {id}", {}, "", 0.0, 0, place=place)


async def test_a_slow_conversation_does_not_hold_up_another_and_each_keeps_its_order() -> None:
    source = Source(
        [request(1, "COPS:1"), request(2, "COPS:1"), request(3, "COPS:2"), request(4, "COPS:1")]
    )
    handled: list[int] = []
    first_may_finish = asyncio.Event()

    async def front(r: StoredRequest) -> None:
        if r.id == 1:
            await first_may_finish.wait()
        handled.append(r.id)

    replaying = Replayer(source)
    replaying.start({"slack": Decoder(front)})
    try:
        for _ in range(100):
            if handled:
                break
            await asyncio.sleep(0.01)
        assert handled == [3], "the other thread went ahead while the first waited"
        first_may_finish.set()
        for _ in range(100):
            if not source.waiting:
                break
            await asyncio.sleep(0.01)
        assert handled == [3, 1, 2, 4], "one thread's requests in the order they came"
        assert source.waiting == [] and replaying.handled == 4
    finally:
        await replaying.close()


async def test_requests_waiting_long_are_said_in_the_log(caplog: pytest.LogCaptureFixture) -> None:
    old = StoredRequest(1, "slack", "acme", "body", {}, "", time.time() - 42, 0, place="C:1")
    source = Source([old])
    handled: list[int] = []

    async def front(r: StoredRequest) -> None:
        handled.append(r.id)

    replaying = Replayer(source)
    with caplog.at_level(logging.WARNING, logger="adapters.intake.replay"):
        replaying.start({"slack": Decoder(front)})
        for _ in range(100):
            if handled:
                break
            await asyncio.sleep(0.01)
        await replaying.close()
    [said] = [r for r in caplog.records if r.getMessage() == "stored requests wait to be handled"]
    assert said.__dict__["oldest_waited_s"] >= 42


async def test_a_conversation_whose_bot_is_down_holds_up_no_other() -> None:
    """A workspace restarting (or whose bot did not start) waits for its bot; what comes for
    any other conversation meanwhile, before or after it, is handed on and removed."""
    source = Source([request(1, "CDOWN:1"), request(2, "CUP:1")])
    handled: list[int] = []
    up = asyncio.Event()

    async def decode(r: StoredRequest) -> None:
        if r.place == "CDOWN:1" and not up.is_set():
            raise NotReady("its bot is restarting")
        handled.append(r.id)

    replaying = Replayer(source)
    replaying.start({"slack": Decoder(decode)})
    try:
        await until(lambda: handled == [2])
        source.waiting.append(request(3, "CUP:2"))
        replaying.wake()
        await until(lambda: handled == [2, 3])
        await until(lambda: [r.id for r in source.waiting] == [1])
        up.set()
        await until(lambda: handled == [2, 3, 1] and source.waiting == [], 5)
    finally:
        await replaying.close()


async def test_requests_put_back_while_a_read_is_under_way_are_read_again() -> None:
    """A conversation's worker puts its requests back (the store failed to count an attempt)
    while the reader waits on the store for newer ones (issue 38's class: the reader set its
    cursor from what it had asked before that await, past what was put back): each request is
    still handed on, without a restart."""
    source = Source([request(1, "CA:1")])
    handled: list[int] = []
    store_broken, reading, let_read = True, asyncio.Event(), asyncio.Event()
    reads = 0

    async def pending(after_id: int, limit: int) -> list[StoredRequest]:
        nonlocal reads
        reads += 1
        if reads == 2:  # the read that request 2 wakes: held until request 1 is put back
            reading.set()
            await let_read.wait()
        return [r for r in source.waiting if r.id > after_id][:limit]

    async def failed(request_id: int, error: str) -> None:
        if store_broken:
            raise OSError("the store is unreachable")

    async def decode(r: StoredRequest) -> None:
        if r.id == 1 and store_broken:
            raise RuntimeError("the bot could not take it")
        handled.append(r.id)

    source.pending = pending  # type: ignore[method-assign]
    source.failed = failed  # type: ignore[method-assign]
    replaying = Replayer(source)
    replaying.start({"slack": Decoder(decode)})
    try:
        await until(lambda: reads == 1)
        source.waiting.append(request(2, "CB:1"))
        replaying.wake()
        await asyncio.wait_for(reading.wait(), 5)
        await until(lambda: not replaying._workers, 5)  # request 1 was put back
        store_broken = False
        let_read.set()
        await until(lambda: sorted(handled) == [1, 2] and source.waiting == [], 10)
    finally:
        await replaying.close()
