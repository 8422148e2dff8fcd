"""Spend's own records (issues 32 and 38): the budget warnings sent, one per budget and
period, so a warning is sent once even when replicas, restarts or two turns at once reach the
threshold together; the reservations of model calls under way, each checked against every
budget it counts against and written in one statement, under the write lock, so that calls at
once (in one process or several) cannot pass a limit together; and the turns a budget holds,
for every status to say so."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from bridge.store.transaction import BridgeTx
from runtime.spend import CallRecording, Charge
from runtime.store.store import Store
from runtime.store.usage import UsageFilter, spent_sql
from runtime.store.writer import Writer

WARNED = "SELECT 1 FROM spend_warnings WHERE workspace_id = ? AND budget = ? AND period_start = ?"
RESERVATION_TTL_S = 900.0  # a reservation a crash left behind stops counting after this

RESERVE = (
    "INSERT INTO spend_reservations (run_id, session_id, agent_id, payer, at, expires_at,"
    " cost_usd, tokens) SELECT ?, ?, ?, ?, ?, ?, ?, ? WHERE {conditions}"
    " ON CONFLICT (run_id) DO UPDATE SET at = excluded.at, expires_at = excluded.expires_at,"
    " cost_usd = excluded.cost_usd, tokens = excluded.tokens"
)


@dataclass(frozen=True, slots=True)
class Ceiling:
    """One budget's condition on a call: the calls that count against it, whether it counts
    dollars or tokens, and how much they may come to in all."""

    which: UsageFilter
    dollars: bool
    limit: float


def _reserved_sql(which: UsageFilter, dollars: bool) -> tuple[str, list[object]]:
    """What the other calls under way have reserved of `which` (params: now, own run)."""
    where, params = replace(which, until=None).where()
    column = "cost_usd" if dollars else "tokens"
    sql = (
        f"SELECT COALESCE(SUM({column}), 0) AS reserved FROM spend_reservations"
        f" WHERE {where} AND expires_at > ? AND run_id <> ?"
    )
    return sql, params


@dataclass(frozen=True, slots=True)
class Held:
    """A turn a budget holds: which (its key), until when its period runs, since when."""

    budget: str
    until: float | None
    since: float


class SpendStore:
    def __init__(self, store: Store) -> None:
        self._store = store

    async def warned(self, workspace_id: str, budget: str, period_start: float) -> bool:
        return bool(await self._store.read_sql(WARNED, (workspace_id, budget, period_start)))

    async def reserved(self, which: UsageFilter, dollars: bool, run_id: str, now: float) -> float:
        """What calls under way, other than `run_id`'s, hold of a budget."""
        sql, params = _reserved_sql(which, dollars)
        rows = await self._store.read_sql(sql, [*params, now, run_id])
        return float(rows[0]["reserved"]) if rows else 0.0

    async def holds(self, run_ids: Iterable[str]) -> dict[str, Held]:
        """What holds each of these turns, if anything."""
        ids = sorted(set(run_ids))
        if not ids:
            return {}
        marks = ", ".join("?" for _ in ids)
        rows = await self._store.read_sql(
            f"SELECT run_id, budget, until, held_at FROM spend_holds WHERE run_id IN ({marks})",
            ids,
        )
        return {r["run_id"]: Held(r["budget"], r["until"], r["held_at"]) for r in rows}


def warning_sent(tx: BridgeTx, workspace_id: str, budget: str, period_start: float) -> None:
    """A second one for the same period conflicts, and its transaction keeps nothing."""
    tx.execute(
        "INSERT INTO spend_warnings (workspace_id, budget, period_start, warned_at)"
        " VALUES (?, ?, ?, ?)",
        (workspace_id, budget, period_start, tx.now()),
    )


def reserve(
    w: Writer, charge: Charge, cost_usd: float, tokens: int, ceilings: Sequence[Ceiling]
) -> None:
    """The call's estimate, reserved only if every budget still has room for it with what
    is spent and reserved: checked and written in one statement, else the transaction fails
    (`ConditionFailedError`) and nothing is reserved."""
    now = w.now()
    conditions, params = [], list[object]()
    for c in ceilings:
        spent, spent_params = spent_sql(c.which, c.dollars)
        reserved, reserved_params = _reserved_sql(c.which, c.dollars)
        conditions.append(f"({spent}) + ({reserved}) + ? <= ?")
        more = cost_usd if c.dollars else tokens
        params += [*spent_params, *reserved_params, now, charge.run_id, more, c.limit]
    values = [charge.run_id, charge.session_id, charge.agent_id, charge.payer, now]
    values += [now + RESERVATION_TTL_S, cost_usd, tokens]
    sql = RESERVE.format(conditions=" AND ".join(conditions) or "1 = 1")
    # Under the fleet's write lock (`ordered`): two replicas' reservations are checked one
    # after the other, each seeing the one committed before it.
    w.write_sql(sql, [*values, *params], expect=1, ordered=True)
    w.write_sql("DELETE FROM spend_reservations WHERE expires_at <= ?", (now,))
    w.write_sql("DELETE FROM spend_holds WHERE run_id = ?", (charge.run_id,))  # not held now


def release(w: CallRecording, run_id: str) -> None:
    """The call's reservation goes (its usage is recorded in `w`, or it was never made)."""
    w.write_sql("DELETE FROM spend_reservations WHERE run_id = ?", (run_id,))


def hold_recorded(
    tx: BridgeTx, run_id: str, session_id: str, budget: str, until: float | None
) -> None:
    tx.execute(
        "INSERT INTO spend_holds (run_id, session_id, budget, until, held_at)"
        " VALUES (?, ?, ?, ?, ?) ON CONFLICT (run_id) DO UPDATE SET budget = excluded.budget,"
        " until = excluded.until, held_at = excluded.held_at",
        (run_id, session_id, budget, until, tx.now()),
    )


def hold_ended(tx: BridgeTx, run_id: str) -> None:
    tx.execute("DELETE FROM spend_holds WHERE run_id = ?", (run_id,))
