"""The intake table on SQLite: a file of its own beside the database (`<database>.inbox`), so
that an acknowledgement waits on its own commit only, never on the turns' writes to the
database (on PostgreSQL the shared database holds it: `adapters/intake/shared.py`).

Two processes may open it (SQLite's WAL mode is made for that): the door process only inserts,
the main process reads and deletes what it handed on; without a door process the main process
does both. Inserts share commits: the writer thread takes every request queued while the last
commit ran and commits them in one transaction (group commit), so a burst costs one commit,
not one per request. A platform id is stored once: a retry of a request still here is
acknowledged and not stored twice (one already handled and deleted is stored again and
dropped by the bridge's dedupe)."""

from __future__ import annotations

import asyncio
import json
import queue
import sqlite3
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from adapters.intake.record import Arrival
from adapters.private_files import create_private

if TYPE_CHECKING:
    from bridge.store import StoredRequest

T = TypeVar("T")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS intake (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    platform TEXT NOT NULL,
    workspace_id TEXT NOT NULL,
    place TEXT NOT NULL,
    dedupe_key TEXT UNIQUE,
    body TEXT NOT NULL,
    headers TEXT NOT NULL,
    query TEXT NOT NULL,
    verified TEXT NOT NULL DEFAULT '',
    received_at REAL NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT
)
"""
_KEPT = "id, platform, workspace_id, place, dedupe_key, body, headers, query, received_at"
_INSERT = (
    "INSERT OR IGNORE INTO intake (platform, workspace_id, place, dedupe_key, body, headers,"
    " query, verified, received_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def inbox_path(database: Path) -> Path:
    return database.with_name(database.name + ".inbox")


def _connect(path: Path) -> sqlite3.Connection:
    create_private(path)  # its -wal and -shm files take its mode
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA busy_timeout=5000")
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    _migrate(conn)
    return conn


def _migrate(conn: sqlite3.Connection) -> None:
    """The table, its ids never used twice (the replay reads on from the newest id it read);
    what an older version left in its inbox (a crash left requests there) is kept."""
    conn.execute("BEGIN IMMEDIATE")  # the door process and this one may both be here at once
    try:
        tables = dict(conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'"))
        if "AUTOINCREMENT" not in tables.get("intake", ""):
            conn.execute(_SCHEMA.replace("EXISTS intake (", "EXISTS intake_ids ("))
            for old in ("inbox", "intake"):  # before issue 30; ids that could be reused
                if old in tables:
                    conn.execute(f"INSERT INTO intake_ids ({_KEPT}) SELECT {_KEPT} FROM {old}")
                    conn.execute(f"DROP TABLE {old}")
            conn.execute("ALTER TABLE intake_ids RENAME TO intake")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def _row(arrival: Arrival) -> tuple[object, ...]:
    return (
        *(arrival.platform, arrival.workspace_id, arrival.place, arrival.key, arrival.body),
        *(json.dumps(arrival.headers), arrival.query, arrival.verified, time.time()),
    )


_Waiter = tuple[Arrival, "asyncio.Future[bool]"]


class InboxWriter:
    """The door process's side: `put` returns once the request is committed."""

    def __init__(self, path: Path, committed: Callable[[int], None]) -> None:
        self._conn = _connect(path)
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
        try:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                outcome = [self._conn.execute(_INSERT, _row(a)).rowcount == 1 for a, _ in batch]
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
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
        self._conn = _connect(path)
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="inbox-reader")

    async def _run(self, fn: Callable[[], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._thread, fn)

    async def pending(self, after_id: int, limit: int) -> list[StoredRequest]:
        from bridge.store import StoredRequest  # here: the door process never loads the bridge

        def read() -> list[Any]:  # sqlite3 rows
            sql = (
                "SELECT id, platform, workspace_id, place, body, headers, query, received_at,"
                " attempts, verified FROM intake WHERE id > ? ORDER BY id LIMIT ?"
            )
            return self._conn.execute(sql, (after_id, limit)).fetchall()

        rows = await self._run(read)
        return [
            StoredRequest(
                id=int(r[0]),
                platform=r[1],
                workspace_id=r[2],
                place=r[3],
                body=r[4],
                headers=json.loads(r[5]),
                query=r[6],
                received_at=float(r[7]),
                attempts=int(r[8]),
                verified=r[9],
            )
            for r in rows
        ]

    async def done(self, ids: list[int]) -> None:
        def delete() -> None:
            marks = ",".join("?" * len(ids))
            self._conn.execute(f"DELETE FROM intake WHERE id IN ({marks})", ids)

        if ids:
            await self._run(delete)

    async def failed(self, request_id: int, error: str) -> None:
        def count() -> None:
            sql = "UPDATE intake SET attempts = attempts + 1, last_error = ? WHERE id = ?"
            self._conn.execute(sql, (error, request_id))

        await self._run(count)

    async def backlog(self) -> tuple[int, float | None]:
        """How many requests wait to be handled, and when the oldest came (epoch seconds)."""

        def count() -> tuple[int, float | None]:
            found = self._conn.execute("SELECT count(*), min(received_at) FROM intake").fetchone()
            return int(found[0]), found[1]

        return await self._run(count)

    def close(self) -> None:
        self._thread.shutdown(wait=True)
        self._conn.close()
