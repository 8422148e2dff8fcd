"""Leases: which replica runs a piece of shared work, with an expiry and a fencing number.

A lease is taken when it is free, expired, or already the taker's; taking it from another
holder raises its fence. A holder renews what it holds before expiry. A write that must not
land after its writer lost the lease carries a fencing check (`Writer.fenced`): it touches
the lease row only if the fence is still the writer's, or the whole transaction is refused.
Times are the store clock's wall time (replicas' clocks are assumed NTP-close; the expiry is
seconds, the skew milliseconds).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

from runtime.clock import Clock
from runtime.errors import LeaseLostError
from runtime.records import Lease
from runtime.store.database import Row, Statement

CLAIM = (
    "INSERT INTO leases (name, holder, fence, expires_at, acquired_at) VALUES (?, ?, 1, ?, ?)"
    " ON CONFLICT (name) DO UPDATE SET"
    " fence = CASE WHEN leases.holder = excluded.holder THEN leases.fence"
    " ELSE leases.fence + 1 END,"
    " acquired_at = CASE WHEN leases.holder = excluded.holder THEN leases.acquired_at"
    " ELSE excluded.acquired_at END,"
    " holder = excluded.holder, expires_at = excluded.expires_at"
    " WHERE leases.holder = excluded.holder OR leases.expires_at < ?"
)
RENEW = "UPDATE leases SET expires_at = ? WHERE holder = ? AND expires_at >= ?"
RELEASE = "UPDATE leases SET expires_at = 0 WHERE name = ? AND holder = ? AND fence = ?"
LEASE = "SELECT * FROM leases WHERE name = ?"
HELD_BY = "SELECT * FROM leases WHERE holder = ? AND expires_at >= ? ORDER BY name"
ALL = "SELECT * FROM leases ORDER BY name"
FENCE = "UPDATE leases SET fence = fence WHERE name = ? AND holder = ? AND fence = ?"


def claim(name: str, holder: str, now: float, ttl_s: float) -> Statement:
    return Statement(CLAIM, (name, holder, now + ttl_s, now, now))


def renew(holder: str, now: float, ttl_s: float) -> Statement:
    return Statement(RENEW, (now + ttl_s, holder, now))


def release(lease: Lease) -> Statement:
    return Statement(RELEASE, (lease.name, lease.holder, lease.fence))


def fenced(lease: Lease) -> Statement:
    """Touches the lease row only while `lease`'s fence is current; else the transaction
    fails with `LeaseLostError`."""
    return Statement(
        FENCE, (lease.name, lease.holder, lease.fence), expect=1, refused_as=LeaseLostError
    )


def lease(r: Row) -> Lease:
    return Lease(r["name"], r["holder"], int(r["fence"]), float(r["expires_at"]))


class _Transaction(Protocol):  # the store's `Writer` (which itself needs this module)
    statements: list[Statement]


class Leases:
    """The lease table's operations, on the store's transactions and reads (`store.leases`)."""

    def __init__(
        self,
        write: Callable[[], AbstractAsyncContextManager[_Transaction]],
        rows: Callable[[str, Sequence[Any]], Awaitable[list[Row]]],
        clock: Clock,
    ) -> None:
        self._write = write
        self._rows = rows
        self._clock = clock

    async def claim(self, name: str, holder: str, ttl_s: float) -> Lease | None:
        """Take (or keep) the lease `name` for `ttl_s` seconds if it is free, expired or
        already `holder`'s; None: another holder has it."""
        async with self._write() as w:
            w.statements.append(claim(name, holder, self._clock.wall(), ttl_s))
        found = await self._rows(LEASE, (name,))
        taken = lease(found[0]) if found else None
        return taken if taken is not None and taken.holder == holder else None

    async def renew(self, holder: str, ttl_s: float) -> list[Lease]:
        """Extend every lease `holder` still holds; returns them (one it lost is absent)."""
        now = self._clock.wall()
        async with self._write() as w:
            w.statements.append(renew(holder, now, ttl_s))
        return [lease(r) for r in await self._rows(HELD_BY, (holder, now))]

    async def release(self, held: Lease) -> None:
        """Give the lease up now (if it is still this holding), for another to take at once."""
        async with self._write() as w:
            w.statements.append(release(held))

    async def all(self) -> list[Lease]:
        """Every lease, held or expired: `switchboard status` and /metrics."""
        return [lease(r) for r in await self._rows(ALL, ())]
