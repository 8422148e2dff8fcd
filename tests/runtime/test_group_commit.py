"""Write transactions that run at once: SQLite commits them as a group (one real transaction,
a savepoint each), and every transaction keeps its own guarantees: one that fails fails alone,
with its own error; the others commit; each caller returns only once its data is committed;
ledger events publish in ledger order, each number once; `after_commit` callbacks run only
for what committed, after the COMMIT."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from runtime.errors import StoreConflictError
from runtime.events import Event
from runtime.payloads import Progress, ProgressState
from runtime.records import AgentProfile, SessionRecord
from runtime.store import sqlite_db
from runtime.store.database import Statement
from runtime.store.store import Store
from tests.runtime.helpers import until


def progress(step: str) -> Event:
    return Event(Progress(state=ProgressState.RUNNING, step=step, elapsed_s=0), "s")


def session(session_id: str) -> SessionRecord:
    return SessionRecord(session_id, "assistant", AgentProfile.DEFAULT, 0.0)


async def follow(store: Store, into: list[Event]) -> None:
    async for event in store.feed.subscribe():
        into.append(event)


async def test_a_write_that_fails_among_others_fails_alone(db_path: Path | str) -> None:
    store = await Store.open(db_path)
    published: list[Event] = []
    follower = asyncio.create_task(follow(store, published))
    await asyncio.sleep(0)
    try:
        async with store.write() as w:
            w.insert_session(session("taken"))
        called: list[str] = []

        async def write(n: int) -> None:
            async with store.write() as w:
                w.insert_session(session("taken" if n == 4 else f"new-{n}"))
                w.emit(progress(f"write {n}"))
                w.after_commit(lambda: called.append(f"write {n}"))

        outcomes = await asyncio.gather(*(write(n) for n in range(10)), return_exceptions=True)
        assert isinstance(outcomes[4], StoreConflictError), outcomes[4]
        assert [o for i, o in enumerate(outcomes) if i != 4] == [None] * 9
        kept = [n for n in range(10) if n != 4]
        assert sorted(called) == sorted(f"write {n}" for n in kept), "only what committed"
        stored = await store.events_after(0)
        assert sorted(e.data.step for e in stored) == sorted(f"write {n}" for n in kept)  # type: ignore[attr-defined]
        seqs = [e.seq for e in stored]
        assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
        ids = {s.id for s in await store.sessions()}
        assert ids == {"taken", *(f"new-{n}" for n in kept)}
        await store.emit(progress("after"))
        await until(lambda: len(published) == 10)
        assert [e.seq for e in published] == [e.seq for e in await store.events_after(0)], (
            "the feed carries every committed event once, in ledger order"
        )
    finally:
        follower.cancel()
        await store.close()


async def test_writes_made_at_once_share_one_commit(
    sqlite_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    groups: list[int] = []
    real = sqlite_db.commit_group

    def counted(conn: sqlite3.Connection, group: list[Any]) -> Any:
        groups.append(len(group))
        return real(conn, group)

    monkeypatch.setattr(sqlite_db, "commit_group", counted)
    store = await Store.open(sqlite_path)
    outside = sqlite3.connect(sqlite_path)
    seen_committed: list[bool] = []

    def committed(step: str) -> None:  # another connection sees only committed data
        found = outside.execute("SELECT 1 FROM events WHERE data LIKE ?", (f'%"{step}"%',))
        seen_committed.append(found.fetchone() is not None)

    async def write(n: int) -> None:
        async with store.write() as w:
            w.emit(progress(f"write {n}"))
            w.after_commit(lambda: committed(f"write {n}"))

    try:
        await asyncio.gather(*(write(n) for n in range(50)))
        assert sum(groups) == 50 and max(groups) > 1, groups
        assert seen_committed == [True] * 50, "each callback ran after its COMMIT"
        assert [e.seq for e in await store.events_after(0)] == list(range(1, 51))
    finally:
        outside.close()
        await store.close()


async def test_a_caller_cancelled_while_its_commit_runs_leaves_it_committed(
    sqlite_path: Path,
) -> None:
    store = await Store.open(sqlite_path)
    called: list[str] = []
    try:

        async def write() -> None:
            async with store.write() as w:
                w.emit(progress("cancelled caller"))
                w.after_commit(lambda: called.append("done"))

        task = asyncio.create_task(write())
        for _ in range(3):
            await asyncio.sleep(0)  # sealed and queued; its commit is under way
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert called == ["done"], "committed, so its callbacks ran"
        await store.emit(progress("next"))
        stored = await store.events_after(0)
        assert [(e.seq, e.data.step) for e in stored] == [  # type: ignore[attr-defined]
            (1, "cancelled caller"),
            (2, "next"),
        ]
    finally:
        await store.close()


def test_a_group_rolls_back_only_the_transaction_that_failed(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "g.db", isolation_level=None)
    conn.execute("CREATE TABLE t (id TEXT PRIMARY KEY)")

    def insert(*ids: str) -> list[Statement]:
        return [Statement("INSERT INTO t (id) VALUES (?)", (i,)) for i in ids]

    outcomes = sqlite_db.commit_group(conn, [insert("a", "b"), insert("c", "a"), insert("d")])
    assert outcomes[0] is None and outcomes[2] is None
    assert isinstance(outcomes[1], StoreConflictError), "c went back with its duplicate a"
    assert [r[0] for r in conn.execute("SELECT id FROM t ORDER BY id")] == ["a", "b", "d"]
    assert not conn.in_transaction
