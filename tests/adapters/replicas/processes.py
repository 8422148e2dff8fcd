"""Real `switchboard run` replicas as a person starts them (the console script, a config file,
`SWITCHBOARD_REPLICA` naming each), their output read as it comes so none ever blocks on a
full pipe, and killed with SIGKILL."""

from __future__ import annotations

import asyncio
import contextlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from runtime.store.store import Store
from tests.adapters.cli_process import Running, start


@dataclass
class Replica:
    name: str
    process: Running
    lines: list[str] = field(default_factory=list)
    port: int = 0
    _reader: asyncio.Task[None] | None = None
    _new_line: asyncio.Event = field(default_factory=asyncio.Event)

    async def _read(self) -> None:
        assert self.process.stdout is not None
        while line := await self.process.stdout.readline():
            self.lines.append(line.decode(errors="replace"))
            self._new_line.set()
        self._new_line.set()

    async def expect(self, text: str, limit_s: float = 30) -> str:
        """The first line of its output that holds `text` (waiting for it)."""
        deadline = asyncio.get_running_loop().time() + limit_s
        while True:
            for line in self.lines:
                if text in line:
                    return line
            if self.process.returncode is not None and self._reader and self._reader.done():
                raise AssertionError(f"{self.name} ended without {text!r}:\n{self.output}")
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                raise AssertionError(f"{self.name} never said {text!r}:\n{self.output}")
            self._new_line.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._new_line.wait(), left)

    @property
    def output(self) -> str:
        return "".join(self.lines)

    def kill(self) -> None:
        """SIGKILL: no clean stop, no lease given up, connections cut."""
        self.process.kill()

    async def stop(self) -> None:
        if self.process.returncode is None:
            self.process.kill()
        await self.process.wait()
        if self._reader is not None:
            await self._reader


async def start_replica(config: Path, name: str) -> Replica:
    """`switchboard run --config FILE` as replica `name`, once it says whether it is active."""
    process = await start("run", "--config", config, env={"SWITCHBOARD_REPLICA": name})
    replica = Replica(name, process)
    replica._reader = asyncio.get_running_loop().create_task(replica._read())
    # A start imports the product in two processes (the run and its door process) and opens
    # the database: on a loaded two-core machine that took over 30 s, as the door tests allow.
    banner = await replica.expect("Switchboard is running", limit_s=60)
    found = re.search(r"http on [^:]+:(\d+)", banner)
    assert found, banner
    replica.port = int(found.group(1))
    await replica.expect(f"Replica {name} on PostgreSQL")
    return replica


async def running_sessions(pg_url: str) -> dict[str, str]:
    """Which replica runs each session with a live lease, by session id, as the database
    has it."""
    store = await Store.open(pg_url, exclusive=False)
    try:
        await store.leases.align()
        sessions = [record.id for record in await store.sessions()]
        return await store.leases.holders(sessions)
    finally:
        await store.close()


def by_name(replicas: list[Replica], name: str) -> Replica:
    return next(r for r in replicas if r.name == name)


async def deliveries_settled(pg_url: str, limit_s: float = 30) -> None:
    """Until every reply written has been sent or given up (none pending or under way): what
    the outbox was going to send after a takeover, it has. A test then says what never came."""
    store = await Store.open(pg_url, exclusive=False)
    try:
        async with asyncio.timeout(limit_s):
            while True:
                rows = await store.read_sql(
                    "SELECT count(*) AS total,"
                    " sum(CASE WHEN status IN ('pending', 'sending') THEN 1 ELSE 0 END) AS open"
                    " FROM deliveries"
                )
                if rows[0]["total"] and not rows[0]["open"]:
                    return
                await asyncio.sleep(0.1)
    finally:
        await store.close()
