"""The intake table is defined once (`bridge/store/intake.py`): on PostgreSQL the shared
database holds it, on SQLite the inbox file beside the database does, and the database itself
has none (a copy an older version made there is dropped)."""

from __future__ import annotations

import dataclasses
import sqlite3
from pathlib import Path

import psycopg

from adapters.intake.inbox import InboxReader, InboxWriter, inbox_path
from adapters.intake.record import Arrival
from bridge.store.schema import MIGRATIONS
from bridge.store.store import BridgeStore
from runtime.store.database import Migration
from runtime.store.postgres import WRITE_LOCK
from runtime.store.store import Store
from tests.postgres import pg_url

__all__ = ["pg_url"]

ARRIVAL = Arrival(
    "telegram", "acme", "42:", "7", '{"update_id": 7}', "telegram secret token", {"X-A": "1"}, "q"
)


def tables(database: Path) -> set[str]:
    with sqlite3.connect(database) as conn:
        return {name for (name,) in conn.execute("SELECT name FROM sqlite_master")}


def inbox_columns(path: Path) -> list[str]:
    with sqlite3.connect(path) as conn:
        return [row[1] for row in conn.execute("PRAGMA table_info(intake)")]


async def test_a_sqlite_database_has_no_intake_table(tmp_path: Path) -> None:
    database = tmp_path / "sb.db"
    store = await Store.open(database, extra_migrations={"bridge": MIGRATIONS})
    await store.close()
    assert {"deliveries", "inbound_seen"} <= tables(database), "the bridge's tables are there"
    assert not {"intake", "forwarded_requests"} & tables(database)


async def test_the_copy_the_last_version_made_in_a_sqlite_database_is_dropped(
    tmp_path: Path,
) -> None:
    """The last version ran migrations 8 and 12 on SQLite too; its database and its inbox
    file beside it both keep working."""
    database = tmp_path / "sb.db"
    last_version = MIGRATIONS[:16]
    store = await Store.open(database, extra_migrations={"bridge": last_version})
    await store.close()
    with sqlite3.connect(database) as conn:  # what migrations 8 and 12 did there
        for number in (8, 12):
            made = last_version[number - 1]
            assert isinstance(made, Migration)
            conn.executescript(made.postgresql)
    assert "intake" in tables(database)
    writer = InboxWriter(inbox_path(database), lambda n: None)
    try:
        assert await writer.put(ARRIVAL)
    finally:
        writer.close()

    store = await Store.open(database, extra_migrations={"bridge": MIGRATIONS})
    await store.close()
    assert "intake" not in tables(database)
    reader = InboxReader(inbox_path(database))
    try:
        [kept] = await reader.pending(0, 10)
        assert kept.body == ARRIVAL.body
    finally:
        reader.close()


async def test_the_shared_table_and_the_inbox_file_hold_one_record(
    pg_url: str, tmp_path: Path
) -> None:
    store = await Store.open(pg_url, extra_migrations={"bridge": MIGRATIONS})
    inbox = tmp_path / "sb.db.inbox"
    writer, reader = InboxWriter(inbox, lambda n: None), InboxReader(inbox)
    try:
        shared = BridgeStore(store)
        assert await shared.take_request(ARRIVAL.request)
        assert not await shared.take_request(ARRIVAL.request), "a retry is stored once"
        assert await writer.put(ARRIVAL)
        [in_shared] = await shared.intake()
        [in_file] = await reader.pending(0, 10)
    finally:
        writer.close()
        reader.close()
        await store.close()
    same = {"id": 0, "received_at": 0.0}
    assert dataclasses.replace(in_shared, **same) == dataclasses.replace(in_file, **same)
    assert in_file.headers == {"X-A": "1"} and in_file.place == "42:"
    with psycopg.connect(pg_url) as conn:
        found = conn.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'intake'"
            " AND table_schema = current_schema()"
        )
        assert {name for (name,) in found} == set(inbox_columns(inbox))


async def test_shared_intake_ids_are_given_under_the_fleets_write_lock(pg_url: str) -> None:
    """The replayer reads on from the newest id it read, so ids must commit in their order:
    each is given under the fleet's write lock (a trigger checks the inserting transaction
    holds it), never ahead of it, as another replica's could otherwise commit first."""
    store = await Store.open(pg_url, extra_migrations={"bridge": MIGRATIONS})
    try:
        async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as conn:
            await conn.execute(
                "CREATE FUNCTION intake_under_lock() RETURNS trigger AS $$ BEGIN"
                " IF NOT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory'"
                f" AND pid = pg_backend_pid() AND objid = {WRITE_LOCK}) THEN"
                " RAISE EXCEPTION 'intake id given outside the write lock'; END IF;"
                " RETURN NEW; END $$ LANGUAGE plpgsql"
            )
            await conn.execute(
                "CREATE TRIGGER intake_under_lock BEFORE INSERT ON intake"
                " FOR EACH ROW EXECUTE FUNCTION intake_under_lock()"
            )
        assert await BridgeStore(store).take_request(ARRIVAL.request)
        [stored] = await BridgeStore(store).intake()
        assert stored.body == ARRIVAL.body
    finally:
        await store.close()
