"""Pruning in bounded batches: each batch is its own short write transaction, so pruning never
holds the store's one writer for longer than one batch, and a write waits at most that long."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

BATCH = 500  # rows a batch deletes at most

Delete = Callable[[str, Sequence[Any]], Awaitable[int]]

# The oldest `batch` events up to the bound, of which those older than the cutoff go: a batch
# touches at most `batch` rows (by the primary key), and pruning stops at a young one.
PRUNE_EVENTS = (
    "DELETE FROM events WHERE seq IN (SELECT seq FROM events WHERE seq <= ? ORDER BY seq"
    " LIMIT ?) AND at < ?"
)


async def in_batches(delete: Delete, sql: str, params: Sequence[Any], batch: int) -> int:
    """Run `sql`, a delete of at most `batch` rows, until a batch removes fewer; returns how
    many rows went in all."""
    total = 0
    while True:
        removed = await delete(sql, params)
        total += removed
        if removed < batch:
            return total
