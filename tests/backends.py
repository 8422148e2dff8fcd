"""The store, runtime and bridge tests run against both engines: `db_path` is a SQLite file or
a fresh PostgreSQL schema (a `postgresql://` URL), which every `Store.open` takes alike. A
test that is about one engine's own mechanics asks for `sqlite_path` or `pg_url` instead."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from tests.postgres import fresh_database


@pytest.fixture(params=["sqlite", "postgresql"])
def db_path(request: pytest.FixtureRequest, tmp_path: Path) -> Path | str:
    if request.param == "postgresql":
        return fresh_database()
    return tmp_path / "switchboard.db"


def folder_of(db: Path | str) -> Path:
    """Where a test keeps its config file beside its database: the SQLite file's folder, or
    a fresh temp folder for a PostgreSQL URL."""
    if isinstance(db, Path):
        return db.parent
    return Path(tempfile.mkdtemp(prefix="sb-test-"))
