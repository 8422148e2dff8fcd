"""The tables of schedules and triggers (issue 31): each one's state, and each run it started.
Reads here; writes as named operations inside a bridge transaction (a run is recorded in the
transaction that stores the message it becomes)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from bridge.store.transaction import BridgeTx
from runtime.store.store import Store


class AutomationKind(StrEnum):
    SCHEDULE = "schedule"
    TRIGGER = "trigger"


class RunOutcome(StrEnum):
    STARTED = "started"  # its message is stored; the turn runs or waits its turn
    SKIPPED = "skipped"  # the previous run was still going: runs never overlap
    COMPLETED = "completed"
    QUIET = "quiet"  # a heartbeat that had nothing to report: not delivered
    FAILED = "failed"
    STOPPED = "stopped"


Key = tuple[str, AutomationKind, str]  # workspace, kind, id


@dataclass(frozen=True, slots=True)
class AutomationState:
    workspace_id: str
    kind: AutomationKind
    automation_id: str
    paused: bool
    changed_by: str | None
    session_id: str | None
    since: float  # first seen, or resumed: slots before this are not owed a run


@dataclass(frozen=True, slots=True)
class AutomationRun:
    workspace_id: str
    kind: AutomationKind
    automation_id: str
    fire_key: str  # a schedule's slot (ISO 8601); a trigger's signed content's SHA-256 (kept
    # as long as its run is: a replay of it is never run)
    slot_at: float  # when it was due (a trigger's: when it came)
    fired_at: float
    missed: int  # slots missed while nothing ran, folded into this run
    outcome: RunOutcome
    detail: str | None = None
    session_id: str | None = None
    message_id: str | None = None


LATEST = (
    "SELECT r.* FROM automation_runs r JOIN (SELECT workspace_id, kind, automation_id,"
    " max(slot_at) AS slot_at FROM automation_runs GROUP BY workspace_id, kind, automation_id) m"
    " ON r.workspace_id = m.workspace_id AND r.kind = m.kind"
    " AND r.automation_id = m.automation_id AND r.slot_at = m.slot_at"
)
RECENT = "SELECT * FROM automation_runs WHERE workspace_id = ? ORDER BY fired_at DESC LIMIT ?"
OWN_SESSION = (
    "SELECT session_id FROM automation_states"
    " WHERE workspace_id = ? AND kind = ? AND automation_id = ?"
)
LATEST_SESSION = (
    "SELECT session_id FROM automation_runs WHERE workspace_id = ? AND kind = ?"
    " AND automation_id = ? AND session_id IS NOT NULL ORDER BY fired_at DESC LIMIT 1"
)


def _state(r: Any) -> AutomationState:
    return AutomationState(
        r["workspace_id"],
        AutomationKind(r["kind"]),
        r["automation_id"],
        bool(r["paused"]),
        r["changed_by"],
        r["session_id"],
        r["since"],
    )


def _run(r: Any) -> AutomationRun:
    return AutomationRun(
        r["workspace_id"],
        AutomationKind(r["kind"]),
        r["automation_id"],
        r["fire_key"],
        r["slot_at"],
        r["fired_at"],
        r["missed"],
        RunOutcome(r["outcome"]),
        r["detail"],
        r["session_id"],
        r["message_id"],
    )


class AutomationStore:
    def __init__(self, store: Store) -> None:
        self._store = store

    async def states(self) -> list[AutomationState]:
        return [_state(r) for r in await self._store.read_sql("SELECT * FROM automation_states")]

    async def latest_runs(self) -> list[AutomationRun]:
        """The newest run of each schedule and trigger."""
        return [_run(r) for r in await self._store.read_sql(LATEST)]

    async def sessions_of(self, key: Key) -> tuple[str | None, str | None]:
        """The session the automation keeps (session = "own"), and its newest run's."""
        own = await self._store.read_sql(OWN_SESSION, key)
        latest = await self._store.read_sql(LATEST_SESSION, key)
        return (
            own[0]["session_id"] if own else None,
            latest[0]["session_id"] if latest else None,
        )

    async def recent_runs(self, workspace_id: str, limit: int = 50) -> list[AutomationRun]:
        return [_run(r) for r in await self._store.read_sql(RECENT, (workspace_id, limit))]

    async def ran(self, key: Key, fire_key: str) -> bool:
        workspace_id, kind, automation_id = key
        rows = await self._store.read_sql(
            "SELECT 1 FROM automation_runs WHERE workspace_id = ? AND kind = ?"
            " AND automation_id = ? AND fire_key = ?",
            (workspace_id, kind, automation_id, fire_key),
        )
        return bool(rows)


def _upsert_state(tx: BridgeTx, key: Key, column: str, value: Any, by: str | None) -> None:
    workspace_id, kind, automation_id = key
    tx.execute(
        "INSERT INTO automation_states (workspace_id, kind, automation_id, changed_by, since, "
        f"{column}) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (workspace_id, kind, automation_id)"
        f" DO UPDATE SET {column} = excluded.{column},"
        " changed_by = COALESCE(excluded.changed_by, automation_states.changed_by)",
        (workspace_id, kind, automation_id, by, tx.now(), value),
    )


def first_seen(tx: BridgeTx, keys: list[Key], at: float) -> None:
    """Slots of these (new) schedules count from `at`: none before is owed a run."""
    for workspace_id, kind, automation_id in keys:
        tx.execute(
            "INSERT INTO automation_states (workspace_id, kind, automation_id, since)"
            " VALUES (?, ?, ?, ?) ON CONFLICT (workspace_id, kind, automation_id) DO NOTHING",
            (workspace_id, kind, automation_id, at),
        )


def keep_session(tx: BridgeTx, key: Key, session_id: str) -> None:
    """The session a schedule or trigger with `session = "own"` keeps between runs."""
    _upsert_state(tx, key, "session_id", session_id, None)


def retimed(tx: BridgeTx, keys: list[Key], at: float) -> None:
    """These schedules' timing changed (an edit, a reload): their slots count from `at`, so
    none from before the change is owed a run."""
    for workspace_id, kind, automation_id in keys:
        tx.execute(
            "INSERT INTO automation_states (workspace_id, kind, automation_id, since)"
            " VALUES (?, ?, ?, ?) ON CONFLICT (workspace_id, kind, automation_id)"
            " DO UPDATE SET since = excluded.since",
            (workspace_id, kind, automation_id, at),
        )


def set_paused(tx: BridgeTx, key: Key, paused: bool, by: str) -> None:
    """Paused, or resumed: a resumed one counts its slots from now (none owed for the pause)."""
    _upsert_state(tx, key, "paused", int(paused), by)
    if not paused:
        workspace_id, kind, automation_id = key
        tx.execute(
            "UPDATE automation_states SET since = ? WHERE workspace_id = ? AND kind = ?"
            " AND automation_id = ?",
            (tx.now(), workspace_id, kind, automation_id),
        )


def record_run(tx: BridgeTx, run: AutomationRun) -> None:
    """A run, once: a second with the same key fails the transaction (and its message)."""
    tx.execute(
        "INSERT INTO automation_runs (workspace_id, kind, automation_id, fire_key, slot_at,"
        " fired_at, missed, outcome, detail, session_id, message_id)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            run.workspace_id,
            run.kind,
            run.automation_id,
            run.fire_key,
            run.slot_at,
            run.fired_at,
            run.missed,
            run.outcome,
            run.detail,
            run.session_id,
            run.message_id,
        ),
    )


def run_ended(tx: BridgeTx, message_id: str, outcome: RunOutcome, detail: str | None) -> None:
    tx.execute(
        "UPDATE automation_runs SET outcome = ?, detail = ? WHERE message_id = ?",
        (outcome, detail, message_id),
    )
