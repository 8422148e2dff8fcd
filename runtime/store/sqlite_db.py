"""SQLite behind the store: one writer connection on its own thread, a read-only connection
beside it (WAL lets reads run while a write commits), and a lock file so that one process
runs a database file.

Group commit: the writer thread takes every write transaction queued while it was busy and
commits them together, in the order they were queued. Each runs in a SAVEPOINT of its own
inside the one real transaction, so one that fails (a uniqueness conflict, a lost lease) rolls
back only itself and its caller gets its own error, while the others commit. A caller is
answered only after the real COMMIT, so what it does once its write returns (publishing its
ledger events, its `after_commit` callbacks) still comes after its data is committed. If the
group as a whole cannot commit (SQLite gave up the transaction, or COMMIT failed), each
transaction runs again on its own, so each caller still gets its own outcome. With WAL and
synchronous=NORMAL a commit costs writing the pages it changed to the log: a group writes the
pages its transactions share once, and wakes the event loop once.
"""

from __future__ import annotations

import asyncio
import fcntl
import logging
import os
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO, Any

import aiosqlite

from runtime.errors import StoreBusyError, StoreConflictError
from runtime.store.database import (
    VERSIONS,
    VERSIONS_TABLE,
    Engine,
    Migrations,
    Row,
    Sequences,
    Statement,
    migration_steps,
    migrations_line,
)
from runtime.store.sqlite_point import PointReader

log = logging.getLogger(__name__)

PRAGMAS = (
    "PRAGMA synchronous=NORMAL",
    "PRAGMA foreign_keys=ON",
    "PRAGMA busy_timeout=5000",
    # Checkpoint the log every 10,000 pages (40 MB) rather than SQLite's 1,000: a checkpoint
    # copies each page once however often the log holds it, and the pages the live rows
    # write again and again (each session's end of an index) are the same few hundred.
    "PRAGMA wal_autocheckpoint=10000",
    "PRAGMA cache_size=-32768",  # KiB: the indexes' hot pages stay in memory
)


Transaction = list[Statement]
SPLIT_FROM = 8  # transactions queued: from this many on, a group takes half of them
Outcome = BaseException | None  # None: committed


class SqliteDatabase:
    engine = Engine.SQLITE
    shared = False
    grouped = True  # a commit is queued in order at once: the next transaction may start
    numbers_events = False  # the one writing process numbers them, in order, as it queues

    def __init__(
        self,
        reader: aiosqlite.Connection,
        writer: sqlite3.Connection,
        executor: ThreadPoolExecutor,
        path: Path,
        held: IO[bytes] | None,
    ) -> None:
        self._reader = reader
        self._point = PointReader(path, PRAGMAS)
        self._writer = writer
        self._executor = executor
        self._held = held
        self._group = GroupCommitter(writer, executor)
        self.path = path
        self.described = f"SQLite file {path}"

    @classmethod
    async def open(cls, path: Path, migrations: Migrations, *, exclusive: bool) -> SqliteDatabase:
        path.parent.mkdir(parents=True, exist_ok=True)
        held = lock(path) if exclusive else None
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="switchboard-store")
        try:
            writer = await asyncio.get_running_loop().run_in_executor(
                executor, open_writer, path, migrations
            )
            reader = await aiosqlite.connect(path, isolation_level=None)
        except BaseException:
            executor.shutdown(wait=False)
            if held is not None:
                held.close()
            raise
        reader.row_factory = aiosqlite.Row
        for pragma in (*PRAGMAS, "PRAGMA query_only=ON"):
            await reader.execute(pragma)
        return cls(reader, writer, executor, path, held)

    async def rows(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        # Executed and read to the end in one call on the connection's thread. A statement
        # left open between two awaits would hold the connection's read snapshot, and a read
        # by another task in that gap would not see writes committed since (an outbox worker
        # once found no intent that had just been written, and left it pending).
        return list(await self._reader.execute_fetchall(sql, params))

    async def point(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        found = self._point.rows(sql, params)  # on this thread (sqlite_point.py: why)
        return await self.rows(sql, params) if found is None else found

    async def begin(self) -> Sequences | None:
        return None  # the transaction is one step in `commit`; this process is the only writer

    def commit(
        self, statements: list[Statement], events: list[Sequence[Any]], hint: bool
    ) -> Awaitable[None]:
        return self._group.commit(statements)  # `events`: none (the process numbers them)

    async def rollback(self) -> None:
        return None

    async def alone(self, sql: str, params: Sequence[Any]) -> int:
        touched: int = await self._on_writer(alone, self._writer, sql, params)
        return touched

    def notifications(self) -> AsyncIterator[str] | None:
        return None

    async def close(self) -> None:
        await self._group.idle()
        self._point.close()
        await self._reader.close()
        await self._on_writer(self._writer.close)
        self._executor.shutdown(wait=True)
        if self._held is not None:
            self._held.close()

    async def _on_writer(self, fn: Any, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)


def open_writer(path: Path, migrations: Migrations) -> sqlite3.Connection:
    """The one writing connection, in WAL mode, every component's schema brought up to date."""
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    for pragma in PRAGMAS:
        conn.execute(pragma)
    conn.execute(VERSIONS_TABLE)
    versions = dict(conn.execute(VERSIONS).fetchall())
    steps = migration_steps(migrations, versions, Engine.SQLITE, str(path))
    for step in steps:
        conn.executescript(
            f"BEGIN;\n{step.script}\nINSERT INTO schema_versions VALUES ('{step.component}',"
            f" {step.number}) ON CONFLICT (component) DO UPDATE SET version = {step.number};"
            "\nCOMMIT;"
        )
        log.debug("store migrated", extra={"component": step.component, "version": step.number})
    log.info(migrations_line(steps), extra={"database": str(path)})
    return conn


class Committing(asyncio.Future[None]):
    """A transaction's place in a group: done once it has committed (or failed). It does not
    give way to a cancelled caller: the commit goes on, and the caller wakes, cancelled, once
    it is over (so it never mistakes a committed write for a failed one)."""

    def cancel(self, msg: Any | None = None) -> bool:
        return False


class GroupCommitter:
    """Transactions queue on the event loop; whatever has queued by the end of the loop's
    current round goes to the writer thread as one group, and while it commits the next
    group gathers. Only the event loop's thread touches the queue."""

    def __init__(self, conn: sqlite3.Connection, executor: ThreadPoolExecutor) -> None:
        self._conn = conn
        self._executor = executor
        self._queue: list[tuple[Transaction, asyncio.Future[None]]] = []
        self._busy = False  # a group is on the writer thread
        self._kicked = False  # a kick is scheduled
        self._idle = asyncio.Event()
        self._idle.set()

    def commit(self, statements: Transaction) -> Committing:
        """Queue one transaction; the future is done once it has committed (or failed)."""
        loop = asyncio.get_running_loop()
        done = Committing(loop=loop)
        self._queue.append((statements, done))
        self._idle.clear()
        if not self._busy and not self._kicked:
            self._kicked = True  # the others written in this round of the loop join it
            loop.call_soon(self._kick)
        return done

    async def idle(self) -> None:
        """Until every queued transaction has been answered."""
        await self._idle.wait()

    def _kick(self) -> None:
        self._kicked = False
        if self._busy:
            return
        if not self._queue:
            self._idle.set()
            return
        # Half of a long queue: the callers of this group go on writing while the writer
        # commits the other half, so the event loop and the writer thread work at once
        # rather than in turn (everything queued at once, one group, would leave the loop
        # waiting while the group commits, and the writer while its callers write).
        take = len(self._queue) if len(self._queue) < SPLIT_FROM else (len(self._queue) + 1) // 2
        group, self._queue = self._queue[:take], self._queue[take:]
        self._busy = True
        loop = asyncio.get_running_loop()
        try:
            running = loop.run_in_executor(
                self._executor, commit_group, self._conn, [statements for statements, _ in group]
            )
        except BaseException as exc:  # the executor is shut down
            self._busy = False
            _settle([done for _, done in group], [exc] * len(group))
            self._kick()
            return
        running.add_done_callback(lambda ran: self._committed(group, ran))

    def _committed(
        self, group: list[tuple[Transaction, asyncio.Future[None]]], ran: asyncio.Future[Any]
    ) -> None:
        self._busy = False
        futures = [done for _, done in group]
        if ran.cancelled():
            _settle(futures, [asyncio.CancelledError()] * len(group))
        elif (error := ran.exception()) is not None:
            _settle(futures, [error] * len(group))
        else:
            _settle(futures, ran.result())
        self._kick()  # what queued meanwhile goes now


def _settle(futures: list[asyncio.Future[None]], outcomes: list[Outcome]) -> None:
    """On the event loop: answer every caller of a group, in the order they queued."""
    for done, outcome in zip(futures, outcomes, strict=True):
        if done.done():
            continue
        if outcome is None:
            done.set_result(None)
        else:
            done.set_exception(outcome)


def commit_group(conn: sqlite3.Connection, group: list[Transaction]) -> list[Outcome]:
    """Commit these transactions together; each one's outcome. First all in one go (almost
    every group commits whole); if one fails, again, each in its own savepoint."""
    if len(group) == 1:
        return [_alone(conn, group[0])]
    try:
        conn.execute("BEGIN IMMEDIATE")
        for statements in group:
            execute(conn, statements)
        conn.execute("COMMIT")
    except Exception:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        return _in_savepoints(conn, group)
    return [None] * len(group)


def _in_savepoints(conn: sqlite3.Connection, group: list[Transaction]) -> list[Outcome]:
    """Each transaction in its own savepoint, so one that fails rolls back alone."""
    outcomes: list[Outcome] = []
    try:
        conn.execute("BEGIN IMMEDIATE")
        for statements in group:
            conn.execute("SAVEPOINT tx")
            outcome: Outcome = None
            try:
                execute(conn, statements)
            except Exception as exc:
                if not conn.in_transaction:
                    raise  # SQLite gave up the whole transaction: each runs on its own
                conn.execute("ROLLBACK TO tx")
                outcome = _as_store_error(exc)
            conn.execute("RELEASE tx")
            outcomes.append(outcome)
        conn.execute("COMMIT")
    except Exception:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        return [_alone(conn, statements) for statements in group]
    return outcomes


def commit(conn: sqlite3.Connection, statements: Transaction) -> None:
    """Run one transaction's statements in one step; all of them or none."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        execute(conn, statements)
        conn.execute("COMMIT")
    except BaseException as exc:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        error = _as_store_error(exc)
        if error is exc:
            raise
        raise error from exc


def execute(conn: sqlite3.Connection, statements: Transaction) -> None:
    for s in statements:
        if not s.many:
            cursor = conn.execute(s.sql, s.params)
            if s.expect is not None and cursor.rowcount != s.expect:
                raise s.refused_as(f"condition failed: {s.sql}")
        elif len(s.params) == 1:  # most often: one ledger event
            conn.execute(s.sql, s.params[0])
        elif s.params:  # none (a transaction without ledger events): nothing to run
            conn.executemany(s.sql, s.params)


def _alone(conn: sqlite3.Connection, statements: Transaction) -> Outcome:
    try:
        commit(conn, statements)
    except Exception as exc:
        return exc
    return None


def _as_store_error(exc: BaseException) -> BaseException:
    """A uniqueness conflict as the store says it (`StoreConflictError`); else as it was."""
    if isinstance(exc, sqlite3.IntegrityError):
        error = StoreConflictError(str(exc))
        error.__cause__ = exc
        return error
    return exc


def alone(conn: sqlite3.Connection, sql: str, params: Sequence[Any]) -> int:
    """One statement in its own short transaction; returns how many rows it touched."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        touched = conn.execute(sql, params).rowcount
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return touched


def lock(path: Path) -> IO[bytes]:
    """Hold `<path>.lock` exclusively: one process runs a database."""
    # Made 0600 as the database is (adapters/private_files.py), whatever the umask.
    private = lambda name, flags: os.open(name, flags, 0o600)  # noqa: E731
    handle = open(f"{path}.lock", "ab", opener=private)  # noqa: SIM115 - held open until close()
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise StoreBusyError(
            f"{path} is in use by another Switchboard process; stop it first (one process "
            "runs a database)"
        ) from None
    handle.truncate(0)  # who holds it, for `switchboard reload` to signal
    handle.write(f"{os.getpid()}\n".encode())
    handle.flush()
    return handle
