"""Durable `Runtime.submit()` against bare sqlite3, in the same run (issue 18).

Bare: one thread committing one small row per transaction (BEGIN IMMEDIATE, INSERT, COMMIT)
to a fresh SQLite file with the store's own settings (WAL and `runtime/store/sqlite_db.py`'s
pragmas): the most a single writer gets out of this machine's SQLite. Switchboard: 100
sessions, each held in a running turn (a model that never answers) so every submit only
queues, and 100 submitters at once, one a session, each awaiting its `submit()` before the
next: every call is a committed transaction (the message and its `message_queued` ledger
event) before it returns. A single submitter, one call after another, is shown beside them.
The three alternate over a few rounds, each on a fresh file; the table gives the medians.

    .venv/bin/python -m bench.submit_bench [--rounds 3] [--messages 10000]
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from bench.runtime_bench import busy_runtime, prompt
from runtime.messages import Priority
from runtime.store.sqlite_db import PRAGMAS

TABLE = "CREATE TABLE rows (seq INTEGER PRIMARY KEY, id TEXT NOT NULL, text TEXT, at REAL)"


def bare_commits(path: Path, rows: int) -> float:
    """Commits a second: one small row per transaction, from one thread."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    for pragma in PRAGMAS:
        conn.execute(pragma)
    conn.execute(TABLE)
    start = time.perf_counter()
    for i in range(rows):
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO rows VALUES (?, ?, ?, ?)", (i, f"msg_{i}", "hello", time.time()))
        conn.execute("COMMIT")
    elapsed = time.perf_counter() - start
    conn.close()
    return rows / elapsed


async def submits(path: Path, messages: int, submitters: int, sessions: int = 100) -> float:
    """Durable submits a second: `submitters` callers at once over `sessions` busy sessions."""
    rt, ids = await busy_runtime(path, sessions, messages)
    each = messages // submitters

    async def submitter(n: int) -> None:
        for i in range(each):
            await rt.submit(ids[(n + i * submitters) % sessions], prompt(f"m{i}", Priority.NORMAL))

    start = time.perf_counter()
    await asyncio.gather(*(submitter(n) for n in range(submitters)))
    elapsed = time.perf_counter() - start
    stored = len(await rt.store.messages())
    await rt.close()
    assert stored == sessions + each * submitters, stored
    return each * submitters / elapsed


async def measure(rounds: int = 3, messages: int = 10_000) -> dict[str, float]:
    runs: dict[str, list[float]] = {"bare": [], "concurrent": [], "single": []}
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(rounds):
            folder = Path(tmp) / str(n)
            folder.mkdir()
            runs["bare"].append(bare_commits(folder / "bare.db", messages))
            runs["concurrent"].append(await submits(folder / "many.db", messages, 100))
            runs["single"].append(await submits(folder / "one.db", messages // 2, 1))
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
    print(f"| bare sqlite3, one row a transaction, one thread | {bare:,.0f} | 1.00x |")
    for name, label in (
        ("concurrent", "Runtime.submit(), 100 submitters over 100 busy sessions"),
        ("single", "Runtime.submit(), one submitter"),
    ):
        print(f"| {label} | {got[name]:,.0f} | {got[name] / bare:.2f}x |")


if __name__ == "__main__":
    asyncio.run(main())
