"""The store, runtime and bridge tests run against both engines: `db_path` is a SQLite file or
a fresh PostgreSQL schema (a `postgresql://` URL), which every `Store.open` takes alike. A
test that is about one engine's own mechanics asks for `sqlite_path` or `pg_url` instead."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.postgres import fresh_database

_FOLDERS: dict[str, Path] = {}  # a PostgreSQL URL -> its test's own folder


@pytest.fixture(params=["sqlite", "postgresql"])
def db_path(request: pytest.FixtureRequest, tmp_path: Path) -> Path | str:
    if request.param == "postgresql":
        return postgres_in(tmp_path)
    return tmp_path / "switchboard.db"


def postgres_in(folder: Path) -> str:
    """The URL of a fresh PostgreSQL schema, for a test that keeps its files in `folder`."""
    url = fresh_database()
    _FOLDERS[url] = folder
    return url


def folder_of(db: Path | str) -> Path:
    """Where a test keeps its config file beside its database: the SQLite file's folder, or
    for a PostgreSQL URL the test's own temp folder (which pytest cleans up)."""
    if isinstance(db, Path):
        return db.parent
    return _FOLDERS[db]
