"""The budget warnings sent (issue 32): one per budget and period, so a warning is sent once
even when replicas, restarts or two turns at once reach the threshold together."""

from __future__ import annotations

from bridge.store.transaction import BridgeTx
from runtime.store import Store

WARNED = "SELECT 1 FROM spend_warnings WHERE workspace_id = ? AND budget = ? AND period_start = ?"


class SpendStore:
    def __init__(self, store: Store) -> None:
        self._store = store

    async def warned(self, workspace_id: str, budget: str, period_start: float) -> bool:
        return bool(await self._store.read_sql(WARNED, (workspace_id, budget, period_start)))


def warning_sent(tx: BridgeTx, workspace_id: str, budget: str, period_start: float) -> None:
    """A second one for the same period conflicts, and its transaction keeps nothing."""
    tx.execute(
        "INSERT INTO spend_warnings (workspace_id, budget, period_start, warned_at)"
        " VALUES (?, ?, ?, ?)",
        (workspace_id, budget, period_start, tx.now()),
    )
