"""The inbox file (`adapters/intake/inbox.py`): the replay reads on from the newest id it read,
so an id is never used twice, even once every request was handed on and removed; and a
request an older version's inbox kept through a crash is still handed on."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from adapters.intake.inbox import InboxReader, InboxWriter
from adapters.intake.record import Arrival


def arrival(key: str) -> Arrival:
    return Arrival("slack", "acme", "C:1", key, "{}", "slack signature")


async def test_ids_grow_even_after_every_request_was_removed(tmp_path: Path) -> None:
    path = tmp_path / "sb.db.inbox"
    writer, reader = InboxWriter(path, lambda n: None), InboxReader(path)
    try:
        assert await writer.put(arrival("Ev1"))
        assert not await writer.put(arrival("Ev1")), "a retry is stored once"
        [first] = await reader.pending(0, 10)
        await writer.forget([first.id])
        assert await writer.put(arrival("Ev2"))
        [second] = await reader.pending(first.id, 10)
        assert second.id > first.id, "read on from the newest id read, it is found"
    finally:
        writer.close()
        reader.close()


async def test_an_inbox_left_by_the_last_version_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "sb.db.inbox"
    with sqlite3.connect(path) as old:
        old.execute(
            "CREATE TABLE inbox (id INTEGER PRIMARY KEY, platform TEXT NOT NULL, workspace_id"
            " TEXT NOT NULL, place TEXT NOT NULL, dedupe_key TEXT UNIQUE, body TEXT NOT NULL,"
            " headers TEXT NOT NULL, query TEXT NOT NULL, received_at REAL NOT NULL, attempts"
            " INTEGER NOT NULL DEFAULT 0, last_error TEXT)"
        )
        old.execute(
            "INSERT INTO inbox (platform, workspace_id, place, dedupe_key, body, headers, query,"
            " received_at) VALUES ('telegram', 'acme', '42:', 'telegram:acme:7', '{}', '{}',"
            " '', 1.0)"
        )
    reader = InboxReader(path)
    try:
        [kept] = await reader.pending(0, 10)
        assert (kept.platform, kept.workspace_id, kept.place) == ("telegram", "acme", "42:")
    finally:
        reader.close()
