"""What the schedules did, read from the store: each fire's error (its message stored, by the
ledger's message_queued event, minus its due time: the slot plus the schedule's jitter,
`config.timing.jitter_for`), and whether every due slot was run once."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from config.schema import SwitchboardConfig


@dataclass
class Fires:
    schedules: int
    due: int  # slots due in the window, over all schedules
    stored: int  # runs whose message was stored
    skipped: int  # runs recorded as skipped: the schedule's previous run was still going
    folded: int  # slots run late as part of a later slot's run ("missed")
    unrun: int  # due slots with no run at all by the end of the window
    doubled: int  # slots whose message was stored more than once
    errors_s: list[float]  # of the stored runs, sorted

    def pct(self, p: float) -> float:
        ordered = self.errors_s
        return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered)) - 1))]


def slots_after(moment: float, count: int, period_s: float = 60.0) -> list[float]:
    """The first `count` slots (whole periods since 1970) after `moment`."""
    first = int(moment // period_s) + 1
    return [(first + k) * period_s for k in range(count)]


def _connect(db: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{db}?mode=ro", uri=True)


def _runs_in(db: Path, due_slots: list[float]) -> int:
    with _connect(db) as conn:
        row = conn.execute(
            "SELECT count(*) + coalesce(sum(missed), 0) FROM automation_runs"
            " WHERE slot_at BETWEEN ? AND ?",
            (due_slots[0], due_slots[-1]),
        ).fetchone()
    return int(row[0])


async def settled(db: Path, want: int, due_slots: list[float], deadline: float) -> None:
    """Until `want` due slots have a run (or were folded into one), or the deadline
    (time.time()) passes."""
    while time.time() < deadline:
        if await asyncio.to_thread(_runs_in, db, due_slots) >= want:
            return
        await asyncio.sleep(1.0)


def read(db: Path, config: SwitchboardConfig, due_slots: list[float]) -> Fires:
    workspace = config.workspaces[0]
    jitter = {s.id: s.timing.jitter_s for s in workspace.schedules}
    with _connect(db) as conn:
        runs = conn.execute(
            "SELECT automation_id, slot_at, outcome, missed, message_id FROM automation_runs"
            " WHERE kind = 'schedule' AND slot_at BETWEEN ? AND ?",
            (due_slots[0], due_slots[-1]),
        ).fetchall()
        queued = {
            json.loads(data)["message_id"]: at
            for data, at in conn.execute(
                "SELECT data, at FROM events WHERE type = 'message_queued'"
            )
        }
        stored = Counter(
            c
            for (c,) in conn.execute(
                "SELECT json_extract(provenance, '$.correlation_id') FROM messages"
            )
        )
    errors = sorted(
        queued[message] - (slot + jitter[schedule])
        for schedule, slot, _, _, message in runs
        if message is not None
    )
    ran = {(schedule, slot) for schedule, slot, *_ in runs}
    folded = sum(missed for *_, missed, _ in runs)
    due = [(s, slot) for s in jitter for slot in due_slots]
    return Fires(
        schedules=len(jitter),
        due=len(due),
        stored=len(errors),
        skipped=sum(outcome == "skipped" for _, _, outcome, _, _ in runs),
        folded=folded,
        unrun=sum(key not in ran for key in due) - folded,
        doubled=sum(stored[f"{workspace.id}/{s}/{_iso(slot)}"] > 1 for s, slot in due),
        errors_s=errors,
    )


def _iso(slot: float) -> str:
    """A slot's fire key, as the clock writes it (UTC schedules)."""
    return datetime.fromtimestamp(slot, UTC).isoformat()
