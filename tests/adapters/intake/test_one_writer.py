"""The inbox file has one writer. With a door process, the main process's replay does not
write it (it tells the door process what it handed on), so no acknowledgement waits on a lock
the main process holds while it turns over model rounds at a lower priority, starved of CPU or
stopped; and a door's commit that finds the file locked by another writer (this process's own
Socket Mode, say) does not block its loop, and is stored once the lock is let go."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from adapters.intake.inbox import InboxWriter
from adapters.intake.local import LocalIntake
from adapters.intake.record import Arrival


def arrival(key: str) -> Arrival:
    return Arrival("slack", "acme", "C:1", key, "{}", "slack signature")


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Another process's write transaction on the file, held open."""
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        other.execute("ROLLBACK")
        other.close()


def rows(path: Path) -> list[int]:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        return [i for (i,) in conn.execute("SELECT id FROM intake ORDER BY id")]


async def test_the_replay_hands_its_writes_to_the_door_process(tmp_path: Path) -> None:
    path = tmp_path / "sb.db.inbox"
    door = InboxWriter(path, lambda n: None)  # the door process's side
    main = LocalIntake(path, lambda n: None)
    told: list[dict[str, Any]] = []
    removed: list[asyncio.Future[None]] = []

    def tell(**message: Any) -> bool:
        told.append(message)
        if "handled" in message:
            removed.append(door.forget(message["handled"]))
        return True

    main.write_through(tell)
    try:
        assert await door.put(arrival("Ev1"))
        [stored] = await main.pending(0, 10)
        with locked(path):  # the file's lock held, as the door's own commit would hold it
            await asyncio.wait_for(main.done([stored.id]), 2)
            await asyncio.wait_for(main.failed(stored.id, "boom"), 2)
        assert told == [{"handled": [stored.id]}, {"replay_failed": [stored.id, "boom"]}]
        await asyncio.gather(*removed)
        assert rows(path) == [], "the door process removed it"
    finally:
        main.close()
        door.close()


async def test_a_commit_that_finds_the_file_locked_waits_without_blocking_the_loop(
    tmp_path: Path,
) -> None:
    path = tmp_path / "sb.db.inbox"
    door = InboxWriter(path, lambda n: None)
    try:
        with locked(path):
            storing = asyncio.ensure_future(door.put(arrival("Ev1")))
            start = time.monotonic()
            for _ in range(20):  # the loop goes on meanwhile
                await asyncio.sleep(0.005)
            assert time.monotonic() - start < 2, "the loop waited for the lock"
            assert not storing.done(), "not acknowledged before it is committed"
        assert await asyncio.wait_for(storing, 5), "stored once the lock is let go"
        assert len(rows(path)) == 1
    finally:
        door.close()
