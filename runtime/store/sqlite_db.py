"""SQLite behind the store: one writer connection on its own thread, a read-only connection
beside it (WAL lets reads run while a write commits), and a lock file so that one process
runs a database file."""

from __future__ import annotations

import asyncio
import fcntl
import logging
import os
import sqlite3
from collections.abc import AsyncIterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO, Any

import aiosqlite

from runtime.errors import LeaseLostError, StoreBusyError, StoreConflictError
from runtime.store.database import Engine, Migrations, Row, Sequences, Statement

log = logging.getLogger(__name__)

PRAGMAS = ("PRAGMA synchronous=NORMAL", "PRAGMA foreign_keys=ON", "PRAGMA busy_timeout=5000")


class SqliteDatabase:
    engine = Engine.SQLITE
    shared = False

    def __init__(
        self,
        reader: aiosqlite.Connection,
        writer: sqlite3.Connection,
        executor: ThreadPoolExecutor,
        path: Path,
        held: IO[bytes] | None,
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._executor = executor
        self._held = held
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

    async def begin(self) -> Sequences | None:
        return None  # the transaction is one step in `commit`; this process is the only writer

    async def commit(self, statements: list[Statement], last_event: int | None) -> None:
        await self._on_writer(commit, self._writer, statements)

    async def rollback(self) -> None:
        return None

    async def delete(self, sql: str, params: Sequence[Any]) -> int:
        removed: int = await self._on_writer(delete, self._writer, sql, params)
        return removed

    def notifications(self) -> AsyncIterator[str] | None:
        return None

    async def close(self) -> None:
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
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_versions (component TEXT PRIMARY KEY,"
        " version INTEGER NOT NULL)"
    )
    for component, scripts in migrations.items():
        row = conn.execute(
            "SELECT version FROM schema_versions WHERE component = ?", (component,)
        ).fetchone()
        version = row[0] if row else 0
        if version > len(scripts):
            raise RuntimeError(
                f"{path}: the {component} schema is version {version}, newer than this "
                f"Switchboard knows ({len(scripts)}); upgrade Switchboard"
            )
        for number, script in enumerate(scripts[version:], start=version + 1):
            text = script if isinstance(script, str) else script.for_engine(Engine.SQLITE)
            conn.executescript(
                f"BEGIN;\n{text}\nINSERT INTO schema_versions VALUES ('{component}', {number})"
                f" ON CONFLICT (component) DO UPDATE SET version = {number};\nCOMMIT;"
            )
            log.info("store migrated", extra={"component": component, "version": number})
    return conn


def commit(conn: sqlite3.Connection, statements: list[Statement]) -> None:
    """Run a transaction's statements in one step; all of them or none."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        for s in statements:
            cursor = conn.executemany(s.sql, s.params) if s.many else conn.execute(s.sql, s.params)
            if s.expect is not None and cursor.rowcount != s.expect:
                raise LeaseLostError(f"fencing check failed: {s.sql}")
        conn.execute("COMMIT")
    except sqlite3.IntegrityError as exc:
        conn.execute("ROLLBACK")
        raise StoreConflictError(str(exc)) from exc
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def delete(conn: sqlite3.Connection, sql: str, params: Sequence[Any]) -> int:
    """One bounded delete in its own short transaction; returns how many rows it removed."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        removed = conn.execute(sql, params).rowcount
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return removed


def lock(path: Path) -> IO[bytes]:
    """Hold `<path>.lock` exclusively: one process runs a database."""
    handle = open(f"{path}.lock", "ab")  # noqa: SIM115 - held open until close()
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
