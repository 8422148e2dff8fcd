"""Part 2: SIGKILL of the active replica; time to the survivor's first reply, nothing lost."""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import time
from dataclasses import dataclass
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
from bench.replicas.slack_side import Replies, SlackSide, fakes
from tests.config_file import anthropic, write_config
from tests.fakes.anthropic_api import Reply, text

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
