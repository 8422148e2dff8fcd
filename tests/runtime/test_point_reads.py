"""The reads of every turn, message and delivery (`Database.point`): on SQLite they run on the
event loop's thread (runtime/store/sqlite_point.py), and still see every commit before them,
and never hold the loop where SQLite would make a read wait."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path

from runtime.events import Event
from runtime.payloads import Progress, ProgressState
from runtime.store.sqlite_db import PRAGMAS
from runtime.store.sqlite_point import PointReader
from runtime.store.store import Store

SEQ = "SELECT seq FROM events WHERE seq = ?"


async def test_a_point_read_sees_each_commit_before_it(db_path: Path) -> None:
    store = await Store.open(db_path)
    try:
        for i in range(1, 101):
            step = Progress(state=ProgressState.RUNNING, step=f"{i}", elapsed_s=0)
            await store.emit(Event(step))
            found = await store.point_sql(SEQ, (i,))
            assert [r["seq"] for r in found] == [i], f"event {i} committed but not read"
    finally:
        await store.close()


def test_a_read_sqlite_would_make_wait_is_handed_to_the_reader_at_once(tmp_path: Path) -> None:
    """A WAL reader waits only while another process recovers the file; a file whose lock is
    held (here a rollback-journal file in an exclusive transaction) shows the same: the read
    on the event loop's thread neither waits for the lock nor fails, it is handed on."""
    path = tmp_path / "held.db"
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("CREATE TABLE t (a INTEGER)")
    point = PointReader(path, PRAGMAS)
    try:
        assert point.rows("SELECT a FROM t", ()) == []
        other.execute("BEGIN EXCLUSIVE")
        started = time.monotonic()
        assert point.rows("SELECT a FROM t", ()) is None
        assert time.monotonic() - started < 0.5, "the read waited for the lock"
        other.execute("COMMIT")
        assert point.rows("SELECT a FROM t", ()) == []
    finally:
        point.close()
        other.close()


async def test_a_point_read_from_another_thread_goes_through_the_reader(sqlite_path: Path) -> None:
    """A store opened on one event loop and read from another thread's loop reads all the
    same (the connection on the opening thread is not touched from another)."""
    store = await Store.open(sqlite_path)
    try:
        await store.emit(Event(Progress.queued()))

        def elsewhere() -> list[int]:
            async def read() -> list[int]:
                return [r["seq"] for r in await store.point_sql(SEQ, (1,))]

            return asyncio.run(read())

        assert await asyncio.to_thread(elsewhere) == [1]
    finally:
        await store.close()
