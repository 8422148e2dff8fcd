"""The store after a long life (issue 11): 100,000 turns through the bridge, spread over 100
days of a manual clock, with retention on (the config's defaults) and off; the database's
size at the end of each, and their ratio.

Each turn is real: a message from a Telegram group (its platform id marked seen), a one-round
turn of a model that answers at once, the answer delivered through the outbox to a recording
transport (a delivery intent, sent and accepted). Groups take turns, 100 turns each, so no
session's transcript grows without bound (that is compaction's part, not this benchmark's).
The two runs go side by side, one process each.
Run: `.venv/bin/python -m bench.store_bench [turns]`."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import statistics
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from adapters.server.assembly import open_runtime
from adapters.telegram.platform import TELEGRAM
from bench.runtime_bench import ZeroLatencyProvider
from bridge.retention import DAY_S
from bridge.service import Bridge
from bridge.types import InboundChat, Route
from config import load
from runtime.clock import ManualClock
from tests.bridge.fakes import RecordingTransport
from tests.config_file import workspace, write_config

TURNS = 100_000
DAYS = 100
AT_ONCE = 100  # groups with a turn under way together
TURNS_PER_GROUP = 100
TABLES = ("events", "deliveries", "inbound_seen", "messages", "transcript", "runs")


@dataclass(frozen=True, slots=True)
class Result:
    retention: bool
    seconds: float
    file_bytes: int
    live_bytes: int  # pages in use (the file less its free pages, which SQLite reuses)
    rows: dict[str, int]
    rounds: list[float]  # how long each pruning round took, in seconds


class Rounds(logging.Handler):
    """The pruning rounds, as the retention task logs them."""

    def __init__(self) -> None:
        super().__init__()
        self.seconds: list[float] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage() == "store pruned":
            self.seconds.append(record.__dict__["elapsed_s"])


def chat(group: int, turn: int) -> InboundChat:
    conversation = f"-100{group}"
    return InboundChat(
        route=Route(
            platform=TELEGRAM.name,
            workspace_id="acme",
            conversation_id=conversation,
            reply_to=str(turn),
        ),
        sender_id="1001",
        dedupe_keys=(f"update:{turn}",),
        text=f"please look at item {turn}: the operator explains it in a sentence or two",
        message_ref=str(turn),
    )


async def live(tmp: Path, retention: bool, turns: int) -> Result:
    groups = turns // TURNS_PER_GROUP + AT_ONCE
    alice = {"id": "alice", "primary": True, "telegram_user_id": 1001, "notify_via": "telegram"}
    chats = [int(f"-100{g}") for g in range(groups)]
    acme = workspace("acme", [alice], telegram={"bot_token": "123:bench", "chats": chats})
    db = tmp / f"store-{retention}.db"
    config = load(write_config(tmp / f"{retention}.toml", db=db, port=None, workspaces=[acme]))
    if not retention:
        config = config.model_copy(
            update={"retention": config.retention.model_copy(update={"interval_s": 0})}
        )
    rounds = Rounds()
    logging.getLogger("bridge.retention").addHandler(rounds)
    logging.getLogger("bridge.retention").setLevel(logging.INFO)
    clock = ManualClock()
    runtime = await open_runtime(config, provider=ZeroLatencyProvider(1), clock=clock)
    bridge = Bridge(config, runtime, progress_interval_s=3600)
    bridge.attach(RecordingTransport())
    await bridge.start()
    step_s = DAYS * DAY_S / turns
    started = time.perf_counter()
    for first in range(0, turns, AT_ONCE):
        for turn in range(first, min(first + AT_ONCE, turns)):
            group = turn // (AT_ONCE * TURNS_PER_GROUP) * AT_ONCE + turn % AT_ONCE
            await bridge.receive(chat(group, turn))
        await bridge.settle()
        await clock.advance(step_s * AT_ONCE)
    seconds = time.perf_counter() - started
    await bridge.close()
    await runtime.close()
    with sqlite3.connect(db) as conn:
        pages, free, size = (
            conn.execute(f"PRAGMA {p}").fetchone()[0]
            for p in ("page_count", "freelist_count", "page_size")
        )
        rows = {t: conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in TABLES}
    live_bytes = (pages - free) * size
    return Result(retention, seconds, db.stat().st_size, live_bytes, rows, rounds.seconds)


def run(retention: bool, turns: int) -> Result:
    with tempfile.TemporaryDirectory() as tmp:
        return asyncio.run(live(Path(tmp), retention, turns))


def mb(n: int) -> str:
    return f"{n / 1e6:,.1f} MB"


async def main(turns: int = TURNS) -> None:
    loop = asyncio.get_running_loop()
    with ProcessPoolExecutor(max_workers=2) as pool:
        on, off = await asyncio.gather(
            loop.run_in_executor(pool, run, True, turns),
            loop.run_in_executor(pool, run, False, turns),
        )
    print(
        f"| {turns:,} turns over {DAYS} days | retention on (defaults) | retention off | on / off |"
    )
    print("|---|---|---|---|")
    print(
        f"| database file | {mb(on.file_bytes)} | {mb(off.file_bytes)} | "
        f"{on.file_bytes / off.file_bytes:.2f} |"
    )
    print(
        f"| pages in use | {mb(on.live_bytes)} | {mb(off.live_bytes)} | "
        f"{on.live_bytes / off.live_bytes:.2f} |"
    )
    for table in TABLES:
        print(
            f"| {table} rows | {on.rows[table]:,} | {off.rows[table]:,} | "
            f"{on.rows[table] / max(1, off.rows[table]):.2f} |"
        )
    print(
        f"| run time | {on.seconds:.0f} s | {off.seconds:.0f} s | {on.seconds / off.seconds:.2f} |"
    )
    if on.rounds:
        print(
            f"\npruning rounds: {len(on.rounds)}, median {statistics.median(on.rounds) * 1000:.1f}"
            f" ms, longest {max(on.rounds) * 1000:.1f} ms (each a few short batches)"
        )


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else TURNS))
