"""The topologies a public port is served in, and one fixture parametrized over them, so a test
of what a client meets at the port runs where users run it:

- `process`: the default of `switchboard run` on SQLite, the doors in a process of their own
  (`adapters/doors/`): it owns the port, stores platform requests in its inbox and forwards every
  other path (the console, health, metrics) to the main process over a Unix socket;
- `inline`: `[server] intake = "inline"`, one process serving the port;
- `replicas`: two replicas on PostgreSQL; the client talks to the standby, whose doors store what
  they take for the active replica (the console is the active replica's only: a standby answers
  503 there, so a console test asks for `CONSOLE` topologies).

A test asks for `topology`, writes its config with `topology.db` as the database and starts it with
`await topology.start(path)`: the App whose port a client uses (on replicas, the standby). All it
started is stopped at the end of the test."""

from __future__ import annotations

import asyncio
import io
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from adapters.server.app import App
from config import load
from tests.postgres import fresh_database

EVERY = ("process", "inline", "replicas")
CONSOLE = ("process", "inline")  # a standby replica serves no console
SQLITE = CONSOLE  # surfaces that exist only where the store is a local file


class Topology:
    def __init__(self, kind: str, folder: Path) -> None:
        self.kind = kind
        self.folder = folder  # where the test keeps its config file
        self.db: Path | str = fresh_database() if kind == "replicas" else folder / "sb.db"
        self.apps: list[App] = []

    def __repr__(self) -> str:
        return self.kind

    async def start(self, path: Path) -> App:
        """Start the config at `path` in this topology: the App a client talks to."""
        if self.kind == "replicas":
            await self._app(path, replica="replica-active")
            standby = await self._app(path, replica="replica-standby")
            assert not standby.active, "the second replica is a standby"
            return standby
        return await self._app(path, doors=self.kind == "process")

    @property
    def active(self) -> App:
        """The App that sends (on replicas, the first one: it holds the `active` lease)."""
        return self.apps[0]

    def holding(self, session_id: str) -> App:
        """The App that runs the session's turns (on replicas, the one holding its lease;
        else the active one)."""
        for app in self.apps:
            homes = app.runtime.homes
            if homes is not None and homes.lease(session_id) is not None:
                return app
        return self.active

    def running(self) -> App | None:
        """The App running a turn now (on replicas, the one holding its session), if any."""
        found = [a for a in self.apps if any(s.running for s in a.runtime.sessions.values())]
        return found[0] if found else None

    async def _app(self, path: Path, *, replica: str | None = None, doors: bool = False) -> App:
        app = App(
            load(path),
            stdin=io.StringIO(),
            stdout=io.StringIO(),
            path=path,
            replica=replica,
            doors=doors,
        )
        await app.start()
        self.apps.append(app)
        assert not doors or app.way_in.separate, "the config has no door for a door process"
        return app

    async def stop(self) -> None:
        """Stop every App, newest first. A stop that hangs fails the test naming what each
        task still awaits (rather than holding the whole run)."""
        for app in reversed(self.apps):
            try:
                await asyncio.wait_for(app.stop(), STOP_LIMIT_S)
            except TimeoutError:
                raise AssertionError(f"App.stop() of {self.kind} hung:\n{_awaited()}") from None
        self.apps.clear()


STOP_LIMIT_S = 60.0


def _awaited() -> str:
    """Each pending task and where it waits."""
    lines = []
    for task in asyncio.all_tasks():
        frames = task.get_stack(limit=8)
        where = " <- ".join(f"{f.f_code.co_name}:{f.f_lineno}" for f in reversed(frames))
        lines.append(f"  {task.get_name()}: {where}")
    return "\n".join(sorted(lines))


async def topology_started(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[Topology]:
    topology = Topology(request.param, tmp_path)
    yield topology
    await topology.stop()


@pytest.fixture(params=EVERY)
async def topology(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Topology]:
    """Every topology: process, inline and replicas."""
    async for started in topology_started(request, tmp_path):
        yield started


@pytest.fixture(params=CONSOLE)
async def console_topology(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[Topology]:
    """Where the console is served: process and inline."""
    async for started in topology_started(request, tmp_path):
        yield started


async def drained(app: App, limit_s: float = 10) -> None:
    """Once everything the doors stored has been handed on (and so is in the store, or was
    refused): what a test then says never happened was not merely late."""
    deadline = time.monotonic() + limit_s
    while await app.way_in.intake.pending(0, 1):
        assert time.monotonic() < deadline, "what the doors stored was not handed on"
        await asyncio.sleep(0.02)
