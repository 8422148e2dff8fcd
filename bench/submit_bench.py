"""Durable `Runtime.submit()` against bare sqlite3, in the same run (issue 18).

Bare: one thread committing one small row per transaction (BEGIN IMMEDIATE, INSERT, COMMIT)
to a fresh SQLite file with the store's own settings (WAL and `runtime/store/sqlite_db.py`'s
pragmas): the most a single writer gets out of this machine's SQLite. Switchboard: 100
sessions, each held in a running turn (a model that never answers) so every submit only
queues, and 100 submitters at once, one a session, each awaiting its `submit()` before the
next: every call is a committed transaction (the message and its `message_queued` ledger
event) before it returns. A single submitter, one call after another, is shown beside them.
The three alternate over a few rounds, each on a fresh file; the table gives the medians.

Where the rest of the time goes, the 100 submitters' own SQL is replayed by one thread of bare
sqlite3 into a copy of the file as it was before they began: the same statements with the
same values, first in the groups the store committed them in, then each transaction alone.
What a submit costs beyond the first of these is Switchboard's Python; what the first costs
beyond bare's one row is the rows a durable submit must write.

    .venv/bin/python -m bench.submit_bench [--rounds 3] [--messages 10000]
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.runtime_bench import busy_runtime, prompt
from runtime.messages import Priority
from runtime.store import sqlite_db
from runtime.store.sqlite_db import PRAGMAS, Transaction, execute

TABLE = "CREATE TABLE rows (seq INTEGER PRIMARY KEY, id TEXT NOT NULL, text TEXT, at REAL)"


def _connect(path: Path) -> sqlite3.Connection:
    """A connection with the store's own settings."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    for pragma in PRAGMAS:
        conn.execute(pragma)
    return conn


def bare_commits(path: Path, rows: int) -> float:
    """Commits a second: one small row per transaction, from one thread."""
    conn = _connect(path)
    conn.execute(TABLE)
    start = time.perf_counter()
    for i in range(rows):
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO rows VALUES (?, ?, ?, ?)", (i, f"msg_{i}", "hello", time.time()))
        conn.execute("COMMIT")
    elapsed = time.perf_counter() - start
    conn.close()
    return rows / elapsed


def replayed(path: Path, groups: list[list[Transaction]], messages: int, *, alone: bool) -> float:
    """Messages a second, their transactions committed by one thread of bare sqlite3 into
    `path` (the file as it was before they were submitted): in their groups, or each alone."""
    if alone:
        groups = [[statements] for group in groups for statements in group]
    conn = _connect(path)
    start = time.perf_counter()
    for group in groups:
        conn.execute("BEGIN IMMEDIATE")
        for statements in group:
            execute(conn, statements)
        conn.execute("COMMIT")
    elapsed = time.perf_counter() - start
    conn.close()
    return messages / elapsed


def _copy(path: Path, to: Path) -> None:
    with sqlite3.connect(path) as source, sqlite3.connect(to) as copy:
        source.backup(copy)
    source.close()
    copy.close()


async def submits(
    path: Path,
    messages: int,
    submitters: int,
    sessions: int = 100,
    groups: list[list[Transaction]] | None = None,
) -> float:
    """Durable submits a second: `submitters` callers at once over `sessions` busy sessions.
    `groups`: gets the transactions their commits ran, as they were grouped, and the file as
    it was before them is copied beside it (`.before`)."""
    rt, ids = await busy_runtime(path, sessions, messages)
    each = messages // submitters
    if groups is not None:
        _copy(path, path.with_suffix(".before"))
        sqlite_db.commit_group = _recording(groups)

    async def submitter(n: int) -> None:
        for i in range(each):
            await rt.submit(ids[(n + i * submitters) % sessions], prompt(f"m{i}", Priority.NORMAL))

    start = time.perf_counter()
    try:
        await asyncio.gather(*(submitter(n) for n in range(submitters)))
    finally:
        sqlite_db.commit_group = COMMIT_GROUP
    elapsed = time.perf_counter() - start
    stored = len(await rt.store.messages())
    await rt.close()
    assert stored == sessions + each * submitters, stored
    return each * submitters / elapsed


COMMIT_GROUP = sqlite_db.commit_group
ROWS = {
    "bare": "bare sqlite3, one row a transaction, one thread",
    "concurrent": "Runtime.submit(), 100 submitters over 100 busy sessions",
    "single": "Runtime.submit(), one submitter",
    "grouped SQL": "the 100 submitters' own statements, bare, one thread, in their groups",
    "alone SQL": "the 100 submitters' own statements, bare, one thread, a transaction each",
}


def _recording(groups: list[list[Transaction]]) -> Callable[..., list[Any]]:
    """The store's group commit, keeping each group it commits."""

    def commit_group(conn: sqlite3.Connection, group: list[Transaction]) -> list[Any]:
        groups.append(group)
        return COMMIT_GROUP(conn, group)

    return commit_group


async def measure(rounds: int = 3, messages: int = 10_000) -> dict[str, float]:
    runs: dict[str, list[float]] = {name: [] for name in ROWS}
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(rounds):
            folder = Path(tmp) / str(n)
            folder.mkdir()
            runs["bare"].append(bare_commits(folder / "bare.db", messages))
            groups: list[list[Transaction]] = []
            many = folder / "many.db"
            runs["concurrent"].append(await submits(many, messages, 100, groups=groups))
            runs["single"].append(await submits(folder / "one.db", messages // 2, 1))
            before = many.with_suffix(".before")
            _copy(before, folder / "alone.db")
            runs["grouped SQL"].append(replayed(before, groups, messages, alone=False))
            runs["alone SQL"].append(replayed(folder / "alone.db", groups, messages, alone=True))
    return {name: statistics.median(values) for name, values in runs.items()}


async def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--messages", type=int, default=10_000)
    args = parser.parse_args(argv)
    got = await measure(args.rounds, args.messages)
    bare = got["bare"]
    print(f"| durable commits, median of {args.rounds} rounds | per second | against bare |")
    print("|---|---|---|")
    for name, label in ROWS.items():
        print(f"| {label} | {got[name]:,.0f} | {got[name] / bare:.2f}x |")


if __name__ == "__main__":
    asyncio.run(main())
