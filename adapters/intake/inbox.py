"""The intake table on SQLite: a file of its own beside the database (`<database>.inbox`), so
that an acknowledgement waits on its own commit only, never on the turns' writes to the
database (on PostgreSQL the shared database holds it: `adapters/intake/shared.py`).

Two processes may open it (SQLite's WAL mode is made for that), but only one writes: the door
process inserts what its doors took and removes what the main process says it handed on (the
main process reads); without a door process the main process does both. A write that had to
wait for a lock held by another process waits as long as that process holds it, and a
process turning over model rounds at a lower priority may hold it a long while: with one
writer no acknowledgement waits on the turns. (The main process's own ways in, Socket Mode and
polling, may write beside a door process; a commit that finds the file locked is tried again
shortly, without blocking the loop.)

Inserts share commits, made on the event loop itself: every request queued in one round of
the loop is committed in one transaction at the end of it (group commit), and answered after
that COMMIT, so an acknowledged request survives a crash of the process. On a thread of its
own the writer would have to win the GIL back after each statement from a loop busy taking
requests, and a batch waited a few milliseconds a statement; a commit in WAL mode with
synchronous=NORMAL writes the log and does not sync it, tens of microseconds. The log is
copied into the file (a checkpoint, which syncs) on a thread of the writer's, with a
connection of its own, at most once a second: one call that holds no lock the commits need
and gives the GIL up for all of its work, so no acknowledgement waits on it either.

A platform id is stored once: a retry of a request still here is acknowledged and not stored
twice (one already handled and removed is stored again and dropped by the bridge's dedupe).
The table and its statements are the intake's one definition (`bridge/store/intake.py`); this
module keeps the file, its group commit and its checkpoints."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from adapters.intake.record import Arrival
from adapters.private_files import create_private
from bridge.store.intake import InboxTable
from bridge.store.records import NewRequest, StoredRequest

T = TypeVar("T")

RETRY_S = 0.002  # a commit that found the file locked (another writer) is tried again after
CHECKPOINT_EVERY_S = 1.0  # the log is copied into the file at most this often


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


def _busy(exc: sqlite3.Error) -> bool:
    return getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_BUSY


class _Locked(Exception):
    """Another process holds the file's write lock: what was queued waits for the next try."""


class InboxWriter:
    """The one writer of the inbox: `put` returns once the request is committed; `forget`
    and `count_failure` return a future done once what the replay did with a stored request
    is committed."""

    def __init__(self, path: Path, committed: Callable[[int], None]) -> None:
        self._conn, self._table = _open(path)
        self._conn.execute("PRAGMA busy_timeout=0")  # never block the loop: tried again later
        self._conn.execute("PRAGMA wal_autocheckpoint=0")  # never on the loop: `_checkpoint`
        self._path = path
        self._checkpoints = ThreadPoolExecutor(1, thread_name_prefix="inbox-checkpoint")
        self._checkpointing: Future[None] | None = None
        self._checkpointed = time.monotonic()
        self._committed = committed  # called after each commit of requests, with its size
        self._loop = asyncio.get_running_loop()
        self._puts: list[tuple[NewRequest, asyncio.Future[bool]]] = []
        self._removals: list[tuple[Sequence[int], asyncio.Future[None]]] = []
        self._failures: list[tuple[int, str, asyncio.Future[None]]] = []
        self._flushing: asyncio.Handle | None = None
        self._closed = False

    async def put(self, arrival: Arrival) -> bool:
        """Store `arrival`; False: a copy with its platform id is here already (a retry)."""
        if self._closed:  # stopping: the platform sends it again
            raise RuntimeError("the intake is closed")
        future: asyncio.Future[bool] = self._loop.create_future()
        self._puts.append((arrival.request, future))
        self._schedule()
        return await future

    def forget(self, ids: Sequence[int]) -> asyncio.Future[None]:
        """Remove these stored requests (handed on)."""
        future: asyncio.Future[None] = self._loop.create_future()
        self._removals.append((ids, future))
        self._schedule()
        return future

    def count_failure(self, request_id: int, error: str) -> asyncio.Future[None]:
        """One more failed attempt at handing this request on, and why."""
        future: asyncio.Future[None] = self._loop.create_future()
        self._failures.append((request_id, error, future))
        self._schedule()
        return future

    def close(self) -> None:
        """Commit what is queued (waiting for another writer's lock, if need be), then close."""
        self._closed = True
        if self._flushing is not None:
            self._flushing.cancel()
        self._conn.execute("PRAGMA busy_timeout=5000")
        self._flush()
        self._checkpoints.shutdown(wait=True)
        self._conn.close()

    def _schedule(self, delay: float = 0.0) -> None:
        """Flush at the end of this round of the loop (the round's requests share the
        commit), or after `delay`."""
        if self._flushing is None:
            loop = self._loop
            self._flushing = (
                loop.call_later(delay, self._flush) if delay else loop.call_soon(self._flush)
            )

    def _flush(self) -> None:
        self._flushing = None
        try:
            self._insert()  # first: the acknowledgements wait on it
            self._remove()
            self._count_failures()
        except _Locked:
            self._schedule(RETRY_S)

    def _insert(self) -> None:
        if not self._puts:
            return
        puts, self._puts = self._puts, []
        now = time.time()
        try:
            stored = self._table.insert([(request, now) for request, _ in puts])
        except sqlite3.Error as exc:
            self._locked(exc, lambda: self._puts.__setitem__(slice(0, 0), puts))
            _settle([future for _, future in puts], exc)
            return
        for (_, future), new in zip(puts, stored, strict=True):
            if not future.done():
                future.set_result(new)
        self._committed(len(puts))
        self._checkpoint()

    def _checkpoint(self) -> None:
        """Copy the log into the file on the checkpoint thread, if a second has passed and
        the last copy is over."""
        if self._checkpointing is not None and not self._checkpointing.done():
            return
        if time.monotonic() - self._checkpointed < CHECKPOINT_EVERY_S:
            return
        self._checkpointed = time.monotonic()
        self._checkpointing = self._checkpoints.submit(_checkpoint, self._path)

    def _remove(self) -> None:
        if not self._removals:
            return
        removals, self._removals = self._removals, []
        outcome: BaseException | None = None
        try:
            self._table.handled([i for ids, _ in removals for i in ids])
        except sqlite3.Error as exc:
            self._locked(exc, lambda: self._removals.__setitem__(slice(0, 0), removals))
            outcome = exc
        _settle([future for _, future in removals], outcome)

    def _count_failures(self) -> None:
        while self._failures:
            request_id, error, future = self._failures[0]
            outcome: BaseException | None = None
            try:
                self._table.failed(request_id, error)
            except sqlite3.Error as exc:
                self._locked(exc, lambda: None)
                outcome = exc
            self._failures.pop(0)
            _settle([future], outcome)

    def _locked(self, exc: sqlite3.Error, requeue: Callable[[], None]) -> None:
        """Raise `_Locked` once what failed is queued again, if it failed for another
        writer's lock (and this one is not closing); else its callers get the error."""
        if _busy(exc) and not self._closed:
            requeue()
            raise _Locked from exc


def _checkpoint(path: Path) -> None:
    """PASSIVE: copies what no reader still needs, and never waits for a lock."""
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as conn:
        conn.execute("PRAGMA wal_checkpoint(PASSIVE)")


def _settle(futures: list[asyncio.Future[Any]], error: BaseException | None) -> None:
    for future in futures:
        if future.done():
            continue
        if error is None:
            future.set_result(None)
        else:
            future.set_exception(error)


class InboxReader:
    """The main process's side: what is waiting, oldest first."""

    def __init__(self, path: Path) -> None:
        self._conn, self._table = _open(path)
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="inbox-reader")

    async def _run(self, fn: Callable[[], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._thread, fn)

    async def pending(self, after_id: int, limit: int) -> list[StoredRequest]:
        return await self._run(lambda: self._table.pending(after_id, limit))

    async def backlog(self) -> tuple[int, float | None]:
        """How many requests wait to be handled, and when the oldest came (epoch seconds)."""
        return await self._run(self._table.backlog)

    def close(self) -> None:
        self._thread.shutdown(wait=True)
        self._conn.close()
