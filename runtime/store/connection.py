"""SQLite plumbing behind the store: the writer connection, migrations, commit, the lock file."""

from __future__ import annotations

import fcntl
import logging
import os
import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from runtime.errors import StoreBusyError, StoreConflictError

log = logging.getLogger(__name__)

PRAGMAS = ("PRAGMA synchronous=NORMAL", "PRAGMA foreign_keys=ON", "PRAGMA busy_timeout=5000")
Statement = tuple[str, Sequence[Any] | list[Sequence[Any]], bool]  # sql, params, executemany


def open_writer(path: Path, migrations: Mapping[str, Sequence[str]]) -> sqlite3.Connection:
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
            conn.executescript(
                f"BEGIN;\n{script}\nINSERT INTO schema_versions VALUES ('{component}', {number})"
                f" ON CONFLICT (component) DO UPDATE SET version = {number};\nCOMMIT;"
            )
            log.info("store migrated", extra={"component": component, "version": number})
    return conn


def commit(conn: sqlite3.Connection, statements: list[Statement]) -> None:
    """Run a transaction's statements in one step; all of them or none."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        for sql, params, many in statements:
            if many:
                conn.executemany(sql, params)
            else:
                conn.execute(sql, params)
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
