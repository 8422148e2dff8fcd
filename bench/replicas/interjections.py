"""Part 3: a message posted to the standby, until the turn on the active replica has it."""

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
from bench.replicas.slack_side import Replies, SlackSide, fakes, last_text
from runtime.tools.command import CommandToolSpec
from tests.config_file import anthropic, write_config
from tests.fakes.anthropic_api import Reply, text, tools

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
