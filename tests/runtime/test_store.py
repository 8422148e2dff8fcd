"""The SQLite store: WAL, versioned migrations, the ledger's sequence, the live feed."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from config.secrets import Secrets
from runtime.agents import AgentSpec
from runtime.engine import Runtime
from runtime.events import Event, EventType, Payload, Unrecognized
from runtime.payloads import MessageDropped, Progress, ProgressState
from runtime.providers.offline import OfflineProvider
from runtime.store.schema import MIGRATIONS
from runtime.store.store import Store
from tests.runtime.helpers import operator


async def test_wal_and_schema_version(sqlite_path: Path) -> None:
    db_path = sqlite_path
    store = await Store.open(db_path)
    await store.close()
    with sqlite3.connect(db_path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        versions = dict(conn.execute("SELECT component, version FROM schema_versions"))
        assert versions == {"runtime": len(MIGRATIONS)}
    store = await Store.open(db_path)  # reopening does not migrate twice
    await store.close()


async def test_sequence_is_monotonic_across_reopen_and_rollback(db_path: Path) -> None:
    store = await Store.open(db_path)
    await store.emit(Event(Progress.queued(), "s"), Event(Progress.queued(), "s"))
    try:
        async with store.write() as w:
            w.emit(Event(Progress.queued(), "s"))
            raise RuntimeError("abandon")
    except RuntimeError:
        pass
    await store.emit(Event(Progress.queued(), "s"))
    await store.close()
    store = await Store.open(db_path)
    await store.emit(Event(Progress.queued(), "s"))
    assert [e.seq for e in await store.events_after(0)] == [1, 2, 3, 4]
    await store.close()


async def test_subscribe_replays_from_a_sequence_then_goes_live(
    db_path: Path, cleanup: list[object]
) -> None:
    rt = await Runtime.open(db_path, provider=OfflineProvider(), agents=[AgentSpec("assistant")])
    cleanup.append(rt)
    sid = await rt.create_session("assistant")
    await rt.submit(sid, operator("first"))
    await rt.wait_idle()
    stored = await rt.store.events_after(0)
    middle = stored[len(stored) // 2].seq
    assert middle is not None
    seen: list[Event] = []

    async def follow() -> None:
        async for event in rt.events(after_seq=middle):
            if event.seq is not None:
                seen.append(event)
            if event.type is EventType.TURN_FINISHED and len(seen) > len(stored) - middle:
                return

    follower = asyncio.create_task(follow())
    await asyncio.sleep(0.01)
    await rt.submit(sid, operator("second"))
    await asyncio.wait_for(follower, 10)
    seqs = [e.seq for e in seen]
    assert seqs == list(range(middle + 1, middle + 1 + len(seqs))), "no gap, no repeat"
    assert seqs[0] == middle + 1


async def test_a_read_sees_every_commit_before_it_while_other_tasks_read(db_path: Path) -> None:
    """Reads share one connection; none may pin an old snapshot for the others."""
    store = await Store.open(db_path)
    busy = True

    async def reader() -> None:
        while busy:
            await store.events_after(0)

    readers = [asyncio.create_task(reader()) for _ in range(4)]
    try:
        for i in range(200):
            await store.emit(Event(Progress(state=ProgressState.RUNNING, step=f"{i}", elapsed_s=0)))
            seen = await store.events_after(0)
            assert len(seen) == i + 1, f"write {i} committed but not seen"
    finally:
        busy = False
        await asyncio.gather(*readers)
        await store.close()


def test_a_stored_event_this_code_cannot_type_is_kept_as_it_was() -> None:
    future = Payload.decode("from_a_newer_version", '{"b":2,"a":1}')
    assert isinstance(future, Unrecognized) and future.event_type == "from_a_newer_version"
    assert Event(future).data_json() == '{"b":2,"a":1}'
    broken = Payload.decode(EventType.PROGRESS, '{"step":"no state"}')
    assert isinstance(broken, Unrecognized) and broken.data == {"step": "no state"}
    typed = Payload.decode(EventType.PROGRESS, Event(Progress.queued()).data_json())
    assert typed == Progress.queued()


async def test_an_event_is_encoded_once_unless_a_secret_in_it_is_masked(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 45 (CPU per turn): the JSON an event was searched for secrets in is the JSON its
    row stores; one that held a secret is stored as masked."""
    secret = "sk-live-0123456789abcdef"
    store = await Store.open(db_path, secrets=Secrets([secret]))
    encoded: list[str] = []
    data_json = Event.data_json

    def counted(event: Event) -> str:
        text = data_json(event)
        encoded.append(text)
        return text

    monkeypatch.setattr(Event, "data_json", counted)
    said = [f"the key is {secret}", "nothing to hide"]
    try:
        async with store.write() as w:
            for text in said:
                w.emit(
                    Event(
                        MessageDropped(
                            message_id="m", reason="full", sender=None, reply_route=None, text=text
                        ),
                        "s",
                    )
                )
        stored = [e.data for e in await store.events_after(0)]
    finally:
        await store.close()
    assert [d.text for d in stored if isinstance(d, MessageDropped)] == [
        "the key is [redacted]",
        "nothing to hide",
    ]
    assert len(encoded) == 3, encoded  # each once to search; the masked one again for its row
