"""Which engine a location names: a `postgresql://` URL, or else a SQLite file path."""

from __future__ import annotations

from pathlib import Path

from runtime.errors import StoreUnavailableError
from runtime.store.database import Database, Migrations
from runtime.store.sqlite_db import SqliteDatabase

NO_POSTGRES = (
    "[storage] url names a PostgreSQL database, but PostgreSQL support is not installed"
    " ({reason}). Install it with: pip install 'switchboard[postgres]'"
)


def is_url(location: str | Path) -> bool:
    return isinstance(location, str) and location.startswith(("postgresql://", "postgres://"))


async def open_database(
    location: str | Path, migrations: Migrations, *, exclusive: bool
) -> Database:
    """The database at `location` (a file path, or a `postgresql://` URL), migrated.

    `exclusive` (SQLite only) makes this process the file's only runner."""
    if is_url(location):
        # psycopg is imported only for a PostgreSQL URL: a SQLite process (and every short
        # `switchboard status` or `check-config` on one) never loads it, nor needs it installed.
        try:
            from runtime.store.postgres import PostgresDatabase
        except ImportError as exc:
            if (exc.name or "psycopg").partition(".")[0] not in ("psycopg", "psycopg_pool"):
                raise  # one of ours: a bug, not a missing extra
            raise StoreUnavailableError(NO_POSTGRES.format(reason=exc)) from exc

        return await PostgresDatabase.open(str(location), migrations)
    return await SqliteDatabase.open(Path(location), migrations, exclusive=exclusive)
