"""A replica's write connection to PostgreSQL that the server ends (a restart, an admin's
pg_terminate_backend, a failover of the database) is opened again: the write that found it
gone fails, the next one goes through."""

from __future__ import annotations

import psycopg
import pytest

from runtime.events import Event
from runtime.payloads import Progress
from runtime.store.postgres import PostgresDatabase
from runtime.store.store import Store


async def test_writes_go_on_after_the_server_ends_the_write_connection(pg_url: str) -> None:
    store = await Store.open(pg_url)
    try:
        await store.emit(Event(Progress.queued(), "s"))
        assert isinstance(store.db, PostgresDatabase)
        pid = store.db._writer.info.backend_pid
        with psycopg.connect(pg_url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        with pytest.raises(psycopg.OperationalError):
            await store.emit(Event(Progress.queued(), "s"))
        await store.emit(Event(Progress.queued(), "s"))
        assert len(await store.events_after(0)) == 2
    finally:
        await store.close()
