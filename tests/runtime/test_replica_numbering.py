"""Replicas on one PostgreSQL database write without waiting on each other: a transaction takes
the fleet's write lock only at the end of its commit, to number its ledger events. Ledger
events still come out in one order, each reaching every replica's feed once; a session's
messages and transcript rows stay in the order they were written, whichever replica wrote
them."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any, ClassVar

import psycopg
import pytest

from runtime.errors import LeaseLostError
from runtime.events import Event, Payload
from runtime.messages import QueueStatus
from runtime.records import AgentProfile, Lease, SessionRecord
from runtime.store.database import Statement
from runtime.store.postgres import WRITE_LOCK
from runtime.store.store import Store
from runtime.transcript import TextBlock, TranscriptMessage
from tests.runtime.helpers import operator, until


class Noted(Payload):
    TYPE: ClassVar[str] = "test_numbering_noted"
    text: str


@asynccontextmanager
async def replicas(url: str, count: int = 2) -> AsyncIterator[list[Store]]:
    stores = [await Store.open(url, exclusive=False) for _ in range(count)]
    try:
        yield stores
    finally:
        for store in stores:
            await store.close()


async def write_lock_holders(url: str) -> int:
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        cursor = await conn.execute(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND objid = %s",
            (WRITE_LOCK,),
        )
        row = await cursor.fetchone()
        assert row is not None
        return int(row[0])


def row(text: str) -> TranscriptMessage:
    return TranscriptMessage(role="user", blocks=[TextBlock(text=text)])


async def test_an_open_transaction_does_not_hold_up_another_replicas_commit(pg_url: str) -> None:
    async with replicas(pg_url) as (a, b):
        async with a.write() as w:
            w.emit(Event(Noted(text="a"), "ses_a"))
            # b commits while a's transaction is still being written.
            await asyncio.wait_for(b.emit(Event(Noted(text="b"), "ses_b")), 5)
            assert await write_lock_holders(pg_url) == 0, "the lock is not held while writing"
        stored = [(e.seq, e.data) for e in await a.events_after(0)]
        assert [data.text for _, data in stored] == ["b", "a"]  # type: ignore[attr-defined]
        assert [seq for seq, _ in stored] == [1, 2]
        assert await write_lock_holders(pg_url) == 0


async def test_events_of_replicas_writing_at_once_reach_every_feed_once_in_order(
    pg_url: str,
) -> None:
    writers, per_writer = 4, 15
    async with replicas(pg_url) as stores:
        seen: dict[int, list[int]] = {0: [], 1: []}

        async def follow(index: int) -> None:
            async for event in stores[index].feed.subscribe(0):
                assert event.seq is not None
                seen[index].append(event.seq)

        followers = [asyncio.ensure_future(follow(i)) for i in seen]

        async def write(store: Store, name: str) -> list[int]:
            numbers = []
            for n in range(per_writer):
                async with store.write() as w:
                    events = [w.emit(Event(Noted(text=f"{name}{n}.{k}"), name)) for k in range(2)]
                numbers += [e.seq for e in events if e.seq is not None]
            return numbers

        written = await asyncio.gather(*(write(stores[i % 2], f"w{i}") for i in range(writers)))
        total = writers * per_writer * 2
        for numbers in written:
            assert numbers == sorted(numbers) and len(numbers) == per_writer * 2
        stored = [e.seq for e in await stores[0].events_after(0)]
        assert sorted(n for numbers in written for n in numbers) == stored
        assert stored == list(range(1, total + 1)), "numbered under the lock: no gap"
        await until(lambda: len(seen[0]) == total and len(seen[1]) == total, wait_s=10)
        for followed in seen.values():
            assert followed == stored, "each event once, in ledger order"
        for follower in followers:
            follower.cancel()


async def test_a_sessions_rows_stay_in_order_when_its_writes_move_to_another_replica(
    pg_url: str,
) -> None:
    async with replicas(pg_url) as (a, b):
        session = SessionRecord("ses_1", "assistant", AgentProfile.DEFAULT, 0.0)
        async with b.write() as w:  # b numbers something first
            w.insert_session(session)
        written: list[str] = []
        for n in range(3):
            async with a.write() as w:
                w.insert_message(f"msg_a{n}", session.id, operator(f"a{n}"), QueueStatus.QUEUED)
                w.append_transcript(session.id, None, row(f"a{n}"))
            written.append(f"a{n}")
        async with b.write() as w:  # the session's writes move to b
            w.insert_message("msg_b", session.id, operator("b"), QueueStatus.QUEUED)
            w.append_transcript(session.id, None, row("b"))
        written.append("b")
        async with a.write() as w:  # and back
            w.insert_message("msg_a", session.id, operator("a"), QueueStatus.QUEUED)
            w.append_transcript(session.id, None, row("a"))
        written.append("a")
        for store in (a, b):
            queued = await store.messages(session_id=session.id)
            assert [m.message.text for m in queued] == written
            assert [r.text() for r in await store.full_transcript(session.id)] == written
            transcript = await store.transcript(session.id)
            assert [r.text() for r in transcript.rows] == written


async def test_a_refused_fence_keeps_nothing_and_takes_no_number(pg_url: str) -> None:
    async with replicas(pg_url) as (a, b):
        await a.emit(Event(Noted(text="first"), "s"))
        lost = Lease("active", "a", fence=7, expires_at=0.0)  # no such lease: the fence fails
        with pytest.raises(LeaseLostError):
            async with a.write() as w:
                w.fenced(lost)
                refused = w.emit(Event(Noted(text="refused"), "s"))
        assert refused.seq is None
        await b.emit(Event(Noted(text="next"), "s"))
        stored = await a.events_after(0)
        assert [(e.seq, e.data.text) for e in stored] == [(1, "first"), (2, "next")]  # type: ignore[attr-defined]


class Shown(Payload):
    TYPE: ClassVar[str] = "test_numbering_shown"
    EPHEMERAL: ClassVar[bool] = True
    text: str


class Urgent(Payload):
    TYPE: ClassVar[str] = "test_numbering_urgent"
    HINT: ClassVar[bool] = True
    text: str


async def test_a_transaction_reaches_its_own_feed_whole_while_another_replicas_commit_is_carried(
    pg_url: str,
) -> None:
    """The database numbers a's events at its commit; until a has heard the numbers, the
    follower carrying b's commits must not carry a's events ahead of the rest of a's
    transaction (its ephemeral events, between them)."""
    async with replicas(pg_url) as (a, b):
        committed, told = asyncio.Event(), asyncio.Event()
        commit = a.db.commit

        async def slow_to_answer(
            statements: list[Statement], events: list[Sequence[Any]], hint: bool
        ) -> int | None:
            first = await commit(statements, events, hint)
            committed.set()
            await told.wait()
            return first

        a.db.commit = slow_to_answer  # type: ignore[method-assign]
        seen: list[str] = []

        async def follow() -> None:
            async for event in a.feed.subscribe(0):
                seen.append(event.data.text)  # type: ignore[attr-defined]

        following = asyncio.ensure_future(follow())

        async def write() -> None:
            async with a.write() as w:
                for name in ("first", "between", "last"):
                    payload = Shown(text=name) if name == "between" else Noted(text=name)
                    w.emit(Event(payload, "s"))

        writing = asyncio.ensure_future(write())
        await asyncio.wait_for(committed.wait(), 5)
        await b.emit(Event(Urgent(text="b"), "s"))  # wakes a's follower at once
        await asyncio.sleep(0.3)  # it reads the ledger: a's events are there, committed
        told.set()
        await writing
        await until(lambda: len(seen) == 4)
        assert seen == ["first", "between", "last", "b"]
        following.cancel()


async def test_only_a_transaction_with_ledger_events_waits_for_the_write_lock(pg_url: str) -> None:
    async with replicas(pg_url, 1) as (store,):
        session = SessionRecord("ses_1", "assistant", AgentProfile.DEFAULT, 0.0)
        async with await psycopg.AsyncConnection.connect(pg_url) as holder:
            await holder.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
            async with asyncio.timeout(5):  # no events: it commits while the lock is held
                async with store.write() as w:
                    w.insert_session(session)
                    w.insert_message("msg_1", session.id, operator("hi"), QueueStatus.QUEUED)
            with_event = asyncio.ensure_future(store.emit(Event(Noted(text="n"), session.id)))
            await asyncio.sleep(0.5)
            assert not with_event.done(), "numbering an event waits for the lock"
            await holder.rollback()  # the lock goes
            await asyncio.wait_for(with_event, 5)
        assert [m.id for m in await store.messages(session_id=session.id)] == ["msg_1"]
        assert [e.seq for e in await store.events_after(0)] == [1]
