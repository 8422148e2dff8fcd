"""Part 5: sessions spread over three replicas (issue 42), SIGKILL of one; for each session the
killed replica held, the time from the kill to that session's next answer at the fake Slack.

Every session is a thread of a channel of its own (Slack paces replies per channel), over
three workspaces. In each round half the sessions get a message whose turn the fake model
holds ("cut off": the kill lands mid-turn), the other half get one right after the kill
("waiting": posted to a surviving replica's door while the killed one still holds the
session); which half alternates from round to round. The killed replica is the non-active
one holding the most sessions, or in the other rounds the active one (what the fleet does once
moves too); the `workspace:` leases it held then are recorded (a workspace's platform side
moves with the replica that served it). A supervisor's restart of the killed replica (a new
name, as a new process has) starts at the kill. Every message must be answered exactly once."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import re
import shutil
import time
from collections import Counter
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import aiohttp
import psycopg

from bench.replicas.processes import (
    Postgres,
    Replica,
    made,
    until,
)
from bench.replicas.slack_side import RESUMED, Replies, SlackSide, fakes
from tests.config_file import anthropic, write_config
from tests.fakes.anthropic_api import Reply, text
from tests.fakes.slack_api import Team

MARKER = re.compile(r"sf-(\d+)-(\d+)-([a-z]+)")
NOTICE = RESUMED  # before the answer of a turn cut off that went on (bridge/texts.py)
ANSWERED_LIMIT_S = 60.0
# Between rounds: past `runtime/homes.py`'s IDLE_S (10 s), after which a replica holding more
# than its share lets idle sessions go, so the restarted replica gets its share again.
SETTLE_S = 12.0


@dataclass
class Sample:
    """One session's wait in one round."""

    kind: str  # "cut off" (its turn under way at the kill) or "waiting" (posted after it)
    killed: bool  # the killed replica held it at the kill (else a survivor, or none)
    answer_s: float  # kill to its answer at the fake Slack
    asked_s: float | None  # kill to the model asked (again) about its message
    expiry_s: float | None  # kill to its lease's expiry as last renewed (killed only)
    claimed_s: float | None  # kill to its lease taken by another replica (killed only)
    by: str  # the replica holding it after the round
    notice_s: float | None = None  # kill to the "(Switchboard restarted ...)" answer in its thread
    notices: int = 0  # such notices posted in its thread this round


@dataclass
class SpreadRound:
    index: int
    killed: str
    active: bool  # the killed replica held the `active` lease
    held: dict[str, int]  # the sessions each replica held at the kill
    restart_s: float  # kill to the restarted replica ready
    active_s: float | None = None  # kill to the `active` lease taken (rounds killing it)
    workspaces: list[str] = field(default_factory=list)  # `workspace:` leases it held then
    samples: list[Sample] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # not answered within the limit


@dataclass
class SpreadOutcome:
    rounds: list[SpreadRound]
    sessions: int
    replicas: int
    ttl_s: float
    posted: int
    lost: int
    doubled: int
    took_over: dict[str, int]  # the killed replica's sessions: by a survivor / the restarted one


@dataclass
class Thread:
    """A session: a thread in a channel of its own."""

    team: Team
    channel: str
    ts: str = ""
    session_id: str = ""


def active_rounds(total: int, active: int) -> set[int]:
    """Which of `total` rounds kill the active replica: `active` of them, spread evenly."""
    return {i for i in range(total) if (i * active) // total != ((i + 1) * active) // total}


async def spread_failover(
    pg: Postgres,
    where: Path,
    kills: int,
    active_kills: int,
    ttl_s: float,
    sessions: int = 24,
    replicas: int = 3,
    workspaces: int = 3,
    settle_s: float = SETTLE_S,
    logs: Path | None = None,
) -> SpreadOutcome:
    """`kills` rounds killing a non-active replica and `active_kills` killing the active one,
    interleaved; `settle_s` between rounds; every replica's output copied into `logs`."""
    slack, model, runners = await fakes()
    asks: dict[str, list[float]] = {}  # marker -> when the model was asked about it
    gates: dict[int, asyncio.Event] = {}

    def responder(body: dict[str, Any]) -> Reply:
        found = MARKER.findall(json.dumps(body["messages"]))
        if not found:
            return text("answer ?")
        rnd, i, kind = found[-1]  # the newest message of the session: this turn's
        marker = f"sf-{rnd}-{i}-{kind}"
        asks.setdefault(marker, []).append(time.monotonic())
        gate = gates.get(int(rnd))
        if kind == "cut" and len(asks[marker]) == 1 and gate is not None:
            return text(f"answer {marker}", hold=gate)  # the turn waits here at the kill
        return text(f"answer {marker}")

    model.responder = responder
    per = -(-sessions // workspaces)
    side = SlackSide.make(slack, workspaces, [f"CSF{c:02d}" for c in range(per)])
    threads = [
        Thread(team, channel) for team in side.teams for channel in side.channels[team.team_id]
    ][:sessions]
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
    fleet = [await Replica.start(config, next(names))]  # the first one is the active one
    fleet += await asyncio.gather(*(Replica.start(config, next(names)) for _ in range(1, replicas)))
    markers: list[str] = []
    rounds: list[SpreadRound] = []
    took_over: Counter[str] = Counter()
    total = kills + active_kills
    on_active = active_rounds(total, active_kills)
    doors = itertools.cycle(range(replicas))

    async def post(http: aiohttp.ClientSession, to: Replica, thread: Thread, words: str) -> str:
        body, headers, ts = side.request(thread.team, thread.channel, words, thread.ts or None)
        async with http.post(f"{to.url}/slack/events", data=body, headers=headers) as r:
            assert r.status == 200, (r.status, await r.text())
        markers.append(words)
        return ts

    def all_asked(marks: list[str]) -> bool:
        return all(m in asks for m in marks)

    def answered(marks: list[str]) -> bool:
        return all(replies.count(f"answer {m}") for m in marks)

    try:
        async with (
            aiohttp.ClientSession() as http,
            await psycopg.AsyncConnection.connect(db, autocommit=True) as conn,
        ):
            await asyncio.sleep(ttl_s / 2)  # each replica has counted the fleet once
            # the sessions: a new thread each, answered at once
            first = [f"sf-0-{i}-new" for i in range(len(threads))]
            stamps = await asyncio.gather(
                *(
                    post(http, fleet[next(doors) % len(fleet)], t, m)
                    for t, m in zip(threads, first, strict=True)
                )
            )
            for thread, ts in zip(threads, stamps, strict=True):
                thread.ts = ts
            await until(lambda: answered(first), ANSWERED_LIMIT_S, "the sessions' first answers")
            keys = await conversations(conn)
            for thread in threads:
                thread.session_id = next(
                    s for k, s in keys.items() if k.endswith(f"{thread.channel}:{thread.ts}")
                )
            assert len({t.session_id for t in threads}) == len(threads), keys
            await asyncio.sleep(settle_s)
            for k in range(1, total + 1):
                roles = {r.name: await r.role(http) for r in fleet}
                active = next(r for r in fleet if roles[r.name] == "active")
                gate = gates[k] = asyncio.Event()
                mine = {
                    i: f"sf-{k}-{i}-{'cut' if (i + k) % 2 else 'wait'}" for i in range(len(threads))
                }
                cut = [i for i, m in mine.items() if m.endswith("-cut")]
                wait = [i for i, m in mine.items() if m.endswith("-wait")]
                await asyncio.gather(
                    *(post(http, fleet[next(doors) % len(fleet)], threads[i], mine[i]) for i in cut)
                )
                held_turns = [mine[i] for i in cut]
                try:
                    await until(
                        partial(all_asked, held_turns),
                        ANSWERED_LIMIT_S,
                        f"round {k}: the held turns' model requests",
                    )
                except TimeoutError:  # killed anyway; said, and counted lost if never answered
                    stuck = [threads[i] for i in cut if mine[i] not in asks]
                    print(f"round {k}: the model never asked about {stuck_words(mine, asks)}")
                    try:
                        print(await diagnose(conn, [t.session_id for t in stuck]), flush=True)
                    except psycopg.Error as error:
                        print(f"(not diagnosed: {error})")
                leases = await session_leases(conn, live=True)
                held = Counter(leases[t.session_id][0] for t in threads if t.session_id in leases)
                if k - 1 in on_active:
                    victim = active
                else:
                    others = [r for r in fleet if r is not active]
                    victim = max(others, key=lambda r: held.get(r.name, 0))
                serving = await platform_leases(conn)
                calls_before = len(slack.calls)
                killed_at, killed_wall = time.monotonic(), time.time()
                await victim.kill()
                replacement = asyncio.ensure_future(Replica.start(config, next(names)))
                gate.set()  # the survivors' held turns answer now
                survivors = [r for r in fleet if r is not victim]
                await asyncio.gather(
                    *(
                        post(http, survivors[n % len(survivors)], threads[i], mine[i])
                        for n, i in enumerate(wait)
                    )
                )
                missing: list[str] = []
                try:
                    await until(
                        partial(answered, list(mine.values())),
                        ANSWERED_LIMIT_S,
                        f"round {k}: answers",
                    )
                except TimeoutError:
                    missing = [m for m in mine.values() if not replies.count(f"answer {m}")]
                    print(f"round {k}: not answered within {ANSWERED_LIMIT_S:g} s: {missing}")
                after = await session_leases(conn, live=False)
                new = await replacement
                restart_s = time.monotonic() - killed_at  # an upper bound: awaited late
                record = SpreadRound(k, victim.name, victim is active, dict(held), restart_s)
                record.missing = missing
                record.workspaces = sorted(n for n, h in serving.items() if h == victim.name)
                if record.active:
                    record.active_s = await active_since(conn) - killed_wall
                notices: dict[tuple[str, str], list[float]] = {}
                for (method, args, _), at in zip(
                    slack.calls[calls_before:], slack.call_times[calls_before:], strict=True
                ):
                    if method == "chat.postMessage" and str(args.get("text")).startswith(NOTICE):
                        place = (str(args.get("channel")), str(args.get("thread_ts")))
                        notices.setdefault(place, []).append(at - killed_at)
                for i, thread in enumerate(threads):
                    marker = mine[i]
                    if marker in missing:
                        continue
                    was = leases.get(thread.session_id)
                    on_killed = was is not None and was[0] == victim.name
                    now = after.get(thread.session_id)
                    asked = [t - killed_at for t in asks.get(marker, []) if t > killed_at]
                    sample = Sample(
                        "cut off" if marker.endswith("-cut") else "waiting",
                        on_killed,
                        replies.first_at[f"answer {marker}"] - killed_at,
                        asked[0] if asked else None,
                        was[1] - killed_wall if on_killed and was else None,
                        now[2] - killed_wall if on_killed and now else None,
                        now[0] if now else "-",
                    )
                    said = notices.get((thread.channel, thread.ts), [])
                    sample.notice_s, sample.notices = (said[0] if said else None), len(said)
                    record.samples.append(sample)
                    if on_killed:
                        took_over["restarted" if sample.by == new.name else "survivor"] += 1
                rounds.append(record)
                waits = [x.answer_s for x in record.samples if x.killed]
                print(
                    f"round {k}: killed {victim.name}{' (active)' if record.active else ''} "
                    f"(serving {record.workspaces or 'no workspace'}), "
                    f"sessions held {dict(sorted(held.items()))}; its {len(waits)} answered "
                    f"{min(waits, default=0):.2f}-{max(waits, default=0):.2f} s after the kill",
                    flush=True,
                )
                fleet = [*survivors, new]
                await asyncio.sleep(settle_s)
            await asyncio.sleep(2.0)  # any late duplicate shows up
    finally:
        for gate in gates.values():
            gate.set()
        await asyncio.gather(*(r.stop() for r in fleet))
        if logs is not None:  # every replica's output, the killed ones' too
            shutil.copytree(where, logs, dirs_exist_ok=True)
        for runner in runners:
            await runner.cleanup()
    lost = sum(1 for m in markers if replies.count(f"answer {m}") == 0)
    doubled = sum(1 for m in markers if replies.count(f"answer {m}") > 1)
    return SpreadOutcome(
        rounds, len(threads), replicas, ttl_s, len(markers), lost, doubled, dict(took_over)
    )


async def conversations(conn: psycopg.AsyncConnection[Any]) -> dict[str, str]:
    """Each conversation's session (the bridge's `conversations` table)."""
    cursor = await conn.execute("SELECT conversation_key, session_id FROM conversations")
    return {str(key): str(session) for key, session in await cursor.fetchall()}


def stuck_words(mine: dict[int, str], asks: dict[str, list[float]]) -> list[str]:
    return [m for m in mine.values() if m.endswith("-cut") and m not in asks]


async def diagnose(conn: psycopg.AsyncConnection[Any], session_ids: list[str]) -> str:
    """Where the messages of sessions whose turn never started stand: each one's newest
    messages' statuses, its lease, and the requests stored by doors and not yet handled."""
    lines = []
    for session_id in session_ids:
        cursor = await conn.execute(
            "SELECT status, text FROM messages WHERE session_id = %s ORDER BY seq DESC LIMIT 2",
            (session_id,),
        )
        messages = [(str(a), str(b)[:40]) for a, b in await cursor.fetchall()]
        cursor = await conn.execute(
            "SELECT holder, expires_at - EXTRACT(EPOCH FROM clock_timestamp()), fence"
            " FROM leases WHERE name = %s",
            (f"session:{session_id}",),
        )
        lease = await cursor.fetchone()
        cursor = await conn.execute(
            "SELECT status FROM runs WHERE session_id = %s ORDER BY started_at DESC LIMIT 1",
            (session_id,),
        )
        run = await cursor.fetchone()
        lines.append(f"- session {session_id}: messages {messages}, lease {lease}, run {run}")
    with contextlib.suppress(psycopg.Error):
        cursor = await conn.execute("SELECT count(*) FROM intake")
        lines.append(f"- requests stored by doors, not yet handled: {await cursor.fetchone()}")
    cursor = await conn.execute(
        "SELECT holder, expires_at FROM leases WHERE name NOT LIKE 'session:%'"
    )
    lines.append(f"- other leases: {await cursor.fetchall()}")
    return "\n".join(lines)


async def platform_leases(conn: psycopg.AsyncConnection[Any]) -> dict[str, str]:
    """The live leases that are not a session's or a replica's (`active`, each workspace's
    `workspace:<id>` where the product has them): their holders, by name."""
    cursor = await conn.execute(
        "SELECT name, holder FROM leases WHERE name NOT LIKE 'session:%'"
        " AND name NOT LIKE 'replica:%' AND expires_at >= EXTRACT(EPOCH FROM clock_timestamp())"
    )
    return {str(name): str(holder) for name, holder in await cursor.fetchall()}


async def active_since(conn: psycopg.AsyncConnection[Any]) -> float:
    """When the `active` lease's holder took it (the database's wall time)."""
    cursor = await conn.execute("SELECT acquired_at FROM leases WHERE name = 'active'")
    row = await cursor.fetchone()
    assert row is not None
    return float(row[0])


async def session_leases(
    conn: psycopg.AsyncConnection[Any], *, live: bool
) -> dict[str, tuple[str, float, float]]:
    """The sessions' leases by session id: holder, expires_at, acquired_at (the database's
    wall time); with `live`, only those not expired now."""
    sql = "SELECT name, holder, expires_at, acquired_at FROM leases WHERE name LIKE 'session:%'"
    if live:
        sql += " AND expires_at >= EXTRACT(EPOCH FROM clock_timestamp())"
    cursor = await conn.execute(sql)
    return {
        str(name).removeprefix("session:"): (str(holder), float(expires), float(acquired))
        for name, holder, expires, acquired in await cursor.fetchall()
    }
