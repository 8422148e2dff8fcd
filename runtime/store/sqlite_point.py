"""SQLite's point reads (`Database.point`: a few rows an index finds, run for every turn,
message and delivery) on the event loop's own thread.

The read-only connection lives on a thread of its own (aiosqlite), and handing a read to it
and waking the loop with the rows cost about 90 us of CPU, where the read itself costs 3 to
10: with five such reads a turn, a tenth of a turn's CPU (issue 45, `docs/benchmarks.md`). In
WAL mode a read never waits on the writer, so run on the loop it holds the loop no longer
than the read itself. It reads as the other reader does: a connection of its own, read-only,
each statement run to its end at once, so no snapshot is held and every commit before it is
seen. Where SQLite would make it wait (the file is being recovered after a crash), or on
another thread than the loop that opened it, the read goes to the reader's thread instead.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any


class PointReader:
    """A read-only connection for the thread that opened it, which never waits for a lock."""

    def __init__(self, path: Path, pragmas: Sequence[str]) -> None:
        self._thread = threading.get_ident()
        self._conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._conn.row_factory = sqlite3.Row
        for pragma in (*pragmas, "PRAGMA query_only=ON", "PRAGMA busy_timeout=0"):
            self._conn.execute(pragma)

    def rows(self, sql: str, params: Sequence[Any]) -> list[sqlite3.Row] | None:
        """The rows; None where this read must go to the reader's thread instead."""
        if threading.get_ident() != self._thread:
            return None
        try:
            return self._conn.execute(sql, params).fetchall()
        except sqlite3.OperationalError as exc:
            if exc.sqlite_errorcode & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
                return None  # it would have waited: the reader's thread waits instead
            raise

    def close(self) -> None:
        self._conn.close()
