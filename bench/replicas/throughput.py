"""Part 1: Slack events acknowledged and turns completed per second, by setup."""

from __future__ import annotations

import asyncio
import signal
import time
from collections import Counter
from collections.abc import Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import psycopg

from bench.replicas.locktimes import LockTimes
from bench.replicas.pinning import bench_pinned, replica_cores
from bench.replicas.processes import (
    Postgres,
    Replica,
    made,
    until,
)
from bench.replicas.profile import Breakdown, Spy
from bench.replicas.slack_side import Replies, SlackSide, fakes
from tests.config_file import anthropic, write_config
from tests.fakes.anthropic_api import text

# -- 1. throughput -----------------------------------------------------------------------


@dataclass
class Throughput:
    label: str
    events: int
    acks_per_s: float
    turns_per_s: float
    cpu: dict[str, float]  # CPU seconds during the load, by process
    wall_s: float
    too_many: int
    lock: LockSamples | None
    replicas: int = 1
    where: dict[str, str] = field(default_factory=dict)  # process -> the cores it ran on
    lock_times: dict[str, LockTimes] = field(default_factory=dict)  # by replica
    xacts: int | None = None  # transactions PostgreSQL committed during the load (all kinds)
    profile: Breakdown | None = None  # the active replica's
    opened: int = 0  # connections the replicas opened during the load (their pools grew)

    def per_turn_ms(self, process: str) -> float:
        return 1000 * self.cpu[process] / self.events


@dataclass
class LockSamples:
    """The fleet's one write lock (PostgreSQL), sampled from pg_locks and pg_stat_activity:
    how often it was held, and what its holder was doing then."""

    samples: int = 0
    held: int = 0
    waiters: int = 0  # summed over samples: connections waiting for it
    holder: Counter[str] = field(default_factory=Counter)
    backlog: int = 0  # the most requests standbys stored that the active replica had not handled

    async def watch(self, uri: str, stop: asyncio.Event, every_s: float = 0.01) -> None:
        async with await psycopg.AsyncConnection.connect(uri, autocommit=True) as conn:
            while not stop.is_set():
                cursor = await conn.execute(
                    "SELECT l.granted, a.state, a.query FROM pg_locks l"
                    " JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory'"
                )
                rows = await cursor.fetchall()
                cursor = await conn.execute("SELECT count(*) FROM intake")
                forwarded = await cursor.fetchone()
                self.backlog = max(self.backlog, int(forwarded[0]) if forwarded else 0)
                self.samples += 1
                self.waiters += sum(1 for granted, _, _ in rows if not granted)
                holders = [(state, query) for granted, state, query in rows if granted]
                if holders:
                    self.held += 1
                    state, query = holders[0]
                    if query.startswith("COMMIT"):
                        self.holder["committing (WAL flush)"] += 1
                    elif state == "idle in transaction":
                        self.holder["waiting for its own replica's next statement"] += 1
                    else:
                        self.holder["running a statement"] += 1
                await asyncio.sleep(every_s)

    def describe(self) -> str:
        if not self.samples:
            return ""
        parts = ", ".join(f"{what} {100 * n / self.held:.0f}%" for what, n in self.holder.items())
        return (
            f"held in {100 * self.held / self.samples:.0f}% of {self.samples} samples (its "
            f"holder: {parts}); {self.waiters / self.samples:.2f} connections waiting for it "
            f"on average; requests stored by standbys and not yet handled: at most {self.backlog}"
        )


async def xact_commits(uri: str) -> int:
    """PostgreSQL's count of committed transactions in this database, every connection's
    (autocommit reads are transactions too); backends report theirs within a second."""
    await asyncio.sleep(1.5)
    async with await psycopg.AsyncConnection.connect(uri, autocommit=True) as conn:
        await conn.execute("SELECT pg_stat_clear_snapshot()")
        cursor = await conn.execute(
            "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"
        )
        row = await cursor.fetchone()
        return int(row[0]) if row else 0


async def spread(http: aiohttp.ClientSession, fleet: list[Replica], workspaces: int) -> None:
    """Until the replicas serve their shares of the workspaces (`/healthz`): the first one
    took them all, and lets go of what is over its share once it has held it for two lease
    times (`adapters/server/workspace_leases.py`)."""
    share = -(-workspaces // len(fleet))

    async def served() -> list[int]:
        counts = []
        for replica in fleet:
            async with http.get(f"{replica.url}/healthz") as response:
                counts.append(len((await response.json()).get("workspaces", [])))
        return counts

    for _ in range(600):
        counts = await served()
        if sum(counts) == workspaces and max(counts) <= share:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"workspaces not spread over the replicas: {counts}")


async def throughput(
    label: str,
    where: Path,
    db: str | Path,
    replicas: int,
    *,
    events: int,
    concurrency: int,
    workspaces: int,
    channels: int,
    postgres: Postgres | None,
    pin: bool = False,
    profile: Path | None = None,
) -> Throughput:
    """With `pin`, each replica on a core of its own and this process on the rest (see
    `pinning.py`); with `profile`, py-spy records the active replica during the load into that
    file. On PostgreSQL each replica's write lock is timed (`locktimes.py`)."""
    with bench_pinned(replicas if pin else 0) as bench_where:
        return await _throughput(
            label,
            where,
            db,
            replicas,
            events=events,
            concurrency=concurrency,
            workspaces=workspaces,
            channels=channels,
            postgres=postgres,
            cores=replica_cores(replicas) if pin else None,
            bench_where=bench_where,
            profile=profile,
        )


async def _throughput(
    label: str,
    where: Path,
    db: str | Path,
    replicas: int,
    *,
    events: int,
    concurrency: int,
    workspaces: int,
    channels: int,
    postgres: Postgres | None,
    cores: list[int] | None,
    bench_where: str,
    profile: Path | None,
) -> Throughput:
    slack, model, runners = await fakes()
    model.responder = lambda body: text("done")
    side = SlackSide.make(slack, workspaces, [f"C{c:03d}" for c in range(channels)])
    made(where)
    config = write_config(
        where / "switchboard.toml",
        db=db,
        provider=anthropic(model.url),
        workspaces=side.workspaces(),
    )

    def start(n: int) -> Coroutine[Any, Any, Replica]:
        timed = where / f"r{n}.locks.json" if postgres else None
        return Replica.start(config, f"r{n}", core=cores[n] if cores else None, lock_times=timed)

    fleet = [await start(0)]  # the first one is the active replica
    fleet += await asyncio.gather(*(start(n) for n in range(1, replicas)))
    names = {r.name: ("active" if r is fleet[0] else f"standby {r.name}") for r in fleet}
    replies = Replies(slack)
    spy: Spy | None = None
    lock_times: dict[str, LockTimes] = {}
    xacts: int | None = None
    try:
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=100)) as http:
            roles = [await r.role(http) for r in fleet]
            assert roles[0] == "active" and all(x == "standby" for x in roles[1:]), roles
            if postgres:
                await spread(http, fleet, workspaces)

            async def load(count: int) -> tuple[float, float]:
                """`count` new threads, round robin over workspaces, channels and replicas;
                (acks done, replies done), as monotonic times."""
                requests = []
                for i in range(count):
                    n = i // len(fleet)  # each workspace's events go to every replica
                    team = side.teams[n % workspaces]
                    channel = side.channels[team.team_id][(n // workspaces) % channels]
                    body, headers, _ = side.request(team, channel, f"event {i}")
                    requests.append((fleet[i % len(fleet)].url, body, headers))
                queue = iter(requests)
                before = replies.count("done")

                async def client() -> None:
                    for url, body, headers in queue:
                        async with http.post(
                            f"{url}/slack/events", data=body, headers=headers
                        ) as r:
                            assert r.status == 200, (r.status, await r.text())

                await asyncio.gather(*(client() for _ in range(concurrency)))
                acked = time.monotonic()
                done = await until(
                    lambda: replies.count("done") >= before + count,
                    limit_s=300,
                    what=f"{label}: replies",
                    step=0.02,
                )
                return acked, done

            # Warm: first-use imports, and connections for 4 requests a workspace at once. The
            # wider load opens the rest (`opened`), as a process does once for a burst this
            # wide, and again for the model's after 5 s idle (the Anthropic SDK's
            # keepalive_expiry). A warm-up as wide as the load kept none of the model's (it
            # lasts longer than 5 s) and, with twice the sessions alive, measured 0.4 ms of CPU
            # a turn more, not less (median of 5 alternated runs).
            await load(4 * workspaces)
            xacts0 = await xact_commits(str(db)) if postgres else 0
            for r in fleet if postgres else []:
                r.proc.send_signal(signal.SIGUSR1)  # the lock's times from here on
            if profile is not None:
                spy = await Spy.start(fleet[0].proc.pid, profile)
            cpu0 = {r.name: r.cpu() for r in fleet}
            sockets0 = {r.name: r.sockets() for r in fleet}
            pg0 = postgres.cpu() if postgres else 0.0
            own0 = time.process_time()
            lock, stop = (LockSamples(), asyncio.Event()) if postgres else (None, None)
            watching = asyncio.ensure_future(lock.watch(str(db), stop)) if lock and stop else None
            start_at = time.monotonic()
            acked, done = await load(events)
            if watching and stop:
                stop.set()
                await watching
            cpu = {names[r.name]: r.cpu() - cpu0[r.name] for r in fleet}
            opened = sum(len(r.sockets() - sockets0[r.name]) for r in fleet)
            if postgres:
                cpu["PostgreSQL"] = postgres.cpu() - pg0
            cpu["bench (fakes, clients)"] = time.process_time() - own0
            breakdown = await spy.stop() if spy else None
            spy = None
            if postgres and lock:
                for r in fleet:
                    r.proc.send_signal(signal.SIGUSR2)
                    kept = where / f"{r.name}.locks.json"
                    await until(kept.exists, limit_s=10, what=f"{r.name}: lock times")
                    lock_times[names[r.name]] = LockTimes.read(kept)
                # less the watcher's own reads: two autocommit statements a sample
                xacts = await xact_commits(str(db)) - xacts0 - 2 * lock.samples - 2
    finally:
        if spy is not None:
            await spy.stop()
        await asyncio.gather(*(r.stop() for r in fleet))
        for runner in runners:
            await runner.cleanup()
    assert replies.count("done") == events + 4 * workspaces, "a turn answered twice"
    placed = {names[r.name]: f"core {cores[n]}" for n, r in enumerate(fleet)} if cores else {}
    return Throughput(
        label,
        events,
        events / (acked - start_at),
        events / (done - start_at),
        cpu,
        done - start_at,
        slack.too_many,
        lock,
        replicas,
        {**placed, "bench (fakes, clients)": bench_where},
        lock_times,
        xacts,
        breakdown,
        opened,
    )
