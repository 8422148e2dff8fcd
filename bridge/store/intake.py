"""The intake table, defined once: each request from outside as its door checked and stored
(`adapters/intake/`), until the replayer has handed it on. One record and one set of
statements in two homes: on PostgreSQL the shared database's table (made by the bridge's
migrations 8 and 12; `BridgeStore.take_request`, `BridgeStore.intake`); on SQLite a file of
its own beside the database (`<db>.inbox`, `adapters/intake/inbox.py`) holding this table
alone (`InboxTable`), so that an acknowledgement waits on its own commit only.

Plain `sqlite3` here: the door process writes the inbox file through this module."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from bridge.store.records import NewRequest, StoredRequest

TABLE = """
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
"""Its ids are never used twice (AUTOINCREMENT; PostgreSQL's identity column never reuses
one either): the replay reads on from the newest id it read."""

INSERT = (
    "INSERT INTO intake (platform, workspace_id, place, dedupe_key, body, headers, query,"
    " verified, received_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
"""A second copy of a platform id fails (the shared table: that commit fails)."""
INSERT_ONCE = INSERT + " ON CONFLICT (dedupe_key) DO NOTHING"
"""A second copy of a platform id is not stored, and the rest of the commit goes on (the
inbox's commits are shared by every request in flight)."""
PENDING = (
    "SELECT id, platform, workspace_id, place, body, headers, query, received_at, attempts,"
    " verified FROM intake WHERE id > ? ORDER BY id LIMIT ?"
)
HANDLED = "DELETE FROM intake WHERE id = ?"
FAILED = "UPDATE intake SET attempts = attempts + 1, last_error = ? WHERE id = ?"
BACKLOG = "SELECT count(*) AS waiting, min(received_at) AS oldest FROM intake"

# What an older version's inbox file kept (before issue 30 the table was `inbox`, and its ids
# could be used again): the columns carried into the table above.
_KEPT = "id, platform, workspace_id, place, dedupe_key, body, headers, query, received_at"


def values(request: NewRequest, received_at: float) -> tuple[object, ...]:
    """`INSERT`'s parameters."""
    r = request
    return (
        *(r.platform, r.workspace_id, r.place, r.dedupe_key, r.body),
        *(json.dumps(r.headers), r.query, r.verified, received_at),
    )


def stored(row: Any) -> StoredRequest:
    """A row of `PENDING` (its columns read by name)."""
    return StoredRequest(
        id=int(row["id"]),
        platform=row["platform"],
        workspace_id=row["workspace_id"],
        body=row["body"],
        headers=json.loads(row["headers"]),
        query=row["query"],
        received_at=float(row["received_at"]),
        attempts=int(row["attempts"]),
        place=row["place"],
        verified=row["verified"],
    )


class InboxTable:
    """The table in the inbox file, on a connection in autocommit mode (`isolation_level`
    None) that one thread uses at a time. Two processes may hold one each (the door process
    inserts; the main process reads and deletes)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        conn.row_factory = sqlite3.Row

    def prepare(self) -> None:
        """The table, made or brought up to date; what an older version left in its file (a
        crash left requests there) is kept."""
        conn = self._conn
        with self._transaction():  # the door process and this one may both be here at once
            found = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'")
            tables = {row["name"]: row["sql"] for row in found}
            if "AUTOINCREMENT" not in tables.get("intake", ""):
                conn.execute(TABLE.replace("EXISTS intake (", "EXISTS intake_ids ("))
                for old in ("inbox", "intake"):
                    if old in tables:
                        conn.execute(f"INSERT INTO intake_ids ({_KEPT}) SELECT {_KEPT} FROM {old}")
                        conn.execute(f"DROP TABLE {old}")
                conn.execute("ALTER TABLE intake_ids RENAME TO intake")

    def insert(self, requests: Sequence[tuple[NewRequest, float]]) -> list[bool]:
        """Each request (with when it came) stored, all in one commit; False for one whose
        platform id is here already (a retry)."""
        with self._transaction():
            return [self._conn.execute(INSERT_ONCE, values(*r)).rowcount == 1 for r in requests]

    def pending(self, after_id: int, limit: int) -> list[StoredRequest]:
        return [stored(row) for row in self._conn.execute(PENDING, (after_id, limit))]

    def handled(self, ids: Sequence[int]) -> None:
        with self._transaction():
            self._conn.executemany(HANDLED, [(request_id,) for request_id in ids])

    def failed(self, request_id: int, error: str) -> None:
        self._conn.execute(FAILED, (error, request_id))

    def backlog(self) -> tuple[int, float | None]:
        """How many requests wait, and when the oldest came (epoch seconds)."""
        row = self._conn.execute(BACKLOG).fetchone()
        return int(row["waiting"]), row["oldest"]

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield
            self._conn.execute("COMMIT")
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
