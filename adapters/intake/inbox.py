"""The intake table on SQLite: a file of its own beside the database (`<database>.inbox`), so
that an acknowledgement waits on its own commit only, never on the turns' writes to the
database (on PostgreSQL the shared database holds it: `adapters/intake/shared.py`).

Two processes may open it (SQLite's WAL mode is made for that): the door process only inserts,
the main process reads and deletes what it handed on; without a door process the main process
does both. Inserts share commits: the writer thread takes every request queued while the last
commit ran and commits them in one transaction (group commit), so a burst costs one commit,
not one per request. A platform id is stored once: a retry of a request still here is
acknowledged and not stored twice (one already handled and deleted is stored again and
dropped by the bridge's dedupe). The table and its statements are the intake's one
definition (`bridge/store/intake.py`); this module keeps the file, its threads and its
group commit."""

from __future__ import annotations

import asyncio
import queue
import sqlite3
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from adapters.intake.record import Arrival
from adapters.private_files import create_private
from bridge.store.intake import InboxTable
from bridge.store.records import StoredRequest

T = TypeVar("T")


def inbox_path(database: Path) -> Path:
    return database.with_name(database.name + ".inbox")


def _open(path: Path) -> tuple[sqlite3.Connection, InboxTable]:
    create_private(path)  # its -wal and -shm files take its mode
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA busy_timeout=5000")
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    table = InboxTable(conn)
    table.prepare()
    return conn, table


_Waiter = tuple[Arrival, "asyncio.Future[bool]"]


class InboxWriter:
    """The door process's side: `put` returns once the request is committed."""

    def __init__(self, path: Path, committed: Callable[[int], None]) -> None:
        self._conn, self._table = _open(path)
        self._committed = committed  # called on the event loop after each commit, with its size
        self._queue: queue.SimpleQueue[_Waiter | None] = queue.SimpleQueue()
        self._loop = asyncio.get_running_loop()
        self._closed = False
        self._thread = threading.Thread(target=self._write, name="inbox-writer", daemon=True)
        self._thread.start()

    async def put(self, arrival: Arrival) -> bool:
        """Store `arrival`; False: a copy with its platform id is here already (a retry)."""
        if self._closed:  # stopping: the platform sends it again
            raise RuntimeError("the intake is closed")
        future: asyncio.Future[bool] = self._loop.create_future()
        self._queue.put((arrival, future))
        return await future

    def close(self) -> None:
        """Commit what is queued, then stop the writer."""
        self._closed = True
        self._queue.put(None)
        self._thread.join()
        self._conn.close()

    def _write(self) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                return
            batch = [first]
            stop = False
            while not self._queue.empty():
                more = self._queue.get()
                if more is None:
                    stop = True
                    break
                batch.append(more)
            self._commit(batch)
            if stop:
                return

    def _commit(self, batch: list[_Waiter]) -> None:
        outcome: list[bool] | BaseException
        now = time.time()
        try:
            outcome = self._table.insert([(arrival.request, now) for arrival, _ in batch])
        except Exception as exc:  # each waiter's request gets a 500; the platform retries
            outcome = exc
        self._loop.call_soon_threadsafe(self._settle, batch, outcome)

    def _settle(self, batch: list[_Waiter], outcome: list[bool] | BaseException) -> None:
        for i, (_, future) in enumerate(batch):
            if future.done():
                continue
            if isinstance(outcome, BaseException):
                future.set_exception(outcome)
            else:
                future.set_result(outcome[i])
        if not isinstance(outcome, BaseException):
            self._committed(len(batch))


class InboxReader:
    """The main process's side: what is waiting, oldest first; handled requests deleted."""

    def __init__(self, path: Path) -> None:
        self._conn, self._table = _open(path)
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="inbox-reader")

    async def _run(self, fn: Callable[[], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._thread, fn)

    async def pending(self, after_id: int, limit: int) -> list[StoredRequest]:
        return await self._run(lambda: self._table.pending(after_id, limit))

    async def done(self, ids: list[int]) -> None:
        if ids:
            await self._run(lambda: self._table.handled(ids))

    async def failed(self, request_id: int, error: str) -> None:
        await self._run(lambda: self._table.failed(request_id, error))

    async def backlog(self) -> tuple[int, float | None]:
        """How many requests wait to be handled, and when the oldest came (epoch seconds)."""
        return await self._run(self._table.backlog)

    def close(self) -> None:
        self._thread.shutdown(wait=True)
        self._conn.close()
