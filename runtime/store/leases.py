"""Leases: which replica runs a piece of shared work, with an expiry and a fencing number.

A lease is taken when it is free, expired, or already the taker's; taking it from another
holder raises its fence. A holder renews what it holds before expiry. A write that must not
land after its writer lost the lease carries a fencing check (`Writer.fenced`): it touches
the lease row only if the fence is still the writer's, or the whole transaction is refused.
Times are the database's: each process reads how far its own clock is from the database's
(`align`) and adds that to every lease time it writes or compares, so two replicas whose
clocks disagree still agree on when a lease runs out (until aligned, its own clock's).

A replica holding many leases (one per session it runs) claims them in one transaction
(`claim_many`) and renews all of them in one statement (`extend`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

from runtime.clock import Clock
from runtime.errors import LeaseLostError
from runtime.records import Lease
from runtime.store.database import Engine, Row, Statement

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
RENEW = "UPDATE leases SET expires_at = ? WHERE holder = ? AND expires_at >= ? AND name LIKE ?"
HOLDING = (
    "SELECT name FROM leases WHERE holder = ? AND expires_at >= ? AND name LIKE ? ORDER BY name"
)
RELEASE = "UPDATE leases SET expires_at = 0 WHERE name = ? AND holder = ? AND fence = ?"
LEASE = "SELECT * FROM leases WHERE name = ?"
HELD_AMONG = "SELECT * FROM leases WHERE holder = ? AND expires_at >= ? AND name IN ({names})"
ALL = "SELECT * FROM leases WHERE name NOT LIKE ? ORDER BY name"
HELD_BY = (
    "SELECT holder, count(*) AS held FROM leases WHERE name LIKE ? AND expires_at >= ?"
    " GROUP BY holder"
)
HOLDER_OF = "SELECT name, holder FROM leases WHERE name IN ({names}) AND expires_at >= ?"
LIVE = "SELECT count(*) AS live FROM leases WHERE name LIKE ? AND expires_at >= ?"
SOONEST = (
    "SELECT min(expires_at) AS soonest FROM leases"
    " WHERE name LIKE ? AND holder <> ? AND expires_at >= ?"
)
FENCE = "UPDATE leases SET fence = fence WHERE name = ? AND holder = ? AND fence = ?"

SESSION = "session:"  # a session's lease: `session:<id>`, held by the replica running it
# Sessions with work waiting (a message arrived or queued, a turn under way or cut off) that
# no replica holds: what a replica with room claims.
UNHELD_WITH_WORK = (
    "SELECT session_id FROM ("
    " SELECT session_id FROM messages WHERE status IN ('arrived', 'queued', 'dequeued')"
    " UNION SELECT session_id FROM runs WHERE status = 'running') AS waiting"
    " WHERE NOT EXISTS (SELECT 1 FROM leases WHERE name = 'session:' || waiting.session_id"
    " AND expires_at >= ?) LIMIT ?"
)


def claim(name: str, holder: str, now: float, ttl_s: float) -> Statement:
    return Statement(CLAIM, (name, holder, now + ttl_s, now, now))


def claim_many(names: Sequence[str], holder: str, now: float, ttl_s: float) -> Statement:
    return Statement(CLAIM, [(n, holder, now + ttl_s, now, now) for n in names], many=True)


def renew(holder: str, now: float, ttl_s: float, names: str) -> Statement:
    return Statement(RENEW, (now + ttl_s, holder, now, names))


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


# The database's own time, in seconds since the epoch (`Leases.align`), by engine.
DATABASE_NOW = {
    Engine.SQLITE: "SELECT (julianday('now') - 2440587.5) * 86400.0 AS now",
    Engine.POSTGRESQL: "SELECT EXTRACT(EPOCH FROM clock_timestamp())::float8 AS now",
}


class _Transaction(Protocol):  # the store's `Writer` (which itself needs this module)
    statements: list[Statement]


class Leases:
    """The lease table's operations, on the store's transactions and reads (`store.leases`)."""

    def __init__(
        self,
        write: Callable[[], AbstractAsyncContextManager[_Transaction]],
        rows: Callable[[str, Sequence[Any]], Awaitable[list[Row]]],
        alone: Callable[[str, Sequence[Any]], Awaitable[int]],
        clock: Clock,
        engine: Engine,
    ) -> None:
        self._write = write
        self._rows = rows
        self._alone = alone
        self._clock = clock
        self._engine = engine
        self.skew_s = 0.0  # the database's clock minus this process's (`align`)

    def now(self) -> float:
        """The database's time, as far as this process can tell (its clock plus the skew)."""
        return self._clock.wall() + self.skew_s

    async def align(self) -> float:
        """Read the database's clock and keep how far this process's is from it (half the
        round trip taken off): lease times are then the database's, whatever this machine's
        clock says. Returns the skew in seconds."""
        before = self._clock.wall()
        [row] = await self._rows(DATABASE_NOW[self._engine], ())
        after = self._clock.wall()
        self.skew_s = float(row["now"]) - (before + after) / 2
        return self.skew_s

    async def claim(self, name: str, holder: str, ttl_s: float) -> Lease | None:
        """Take (or keep) the lease `name` for `ttl_s` seconds if it is free, expired or
        already `holder`'s; None: another holder has it."""
        async with self._write() as w:
            w.statements.append(claim(name, holder, self.now(), ttl_s))
        found = await self._rows(LEASE, (name,))
        taken = lease(found[0]) if found else None
        return taken if taken is not None and taken.holder == holder else None

    def claim_new(self, w: _Transaction, name: str, holder: str, ttl_s: float) -> Lease:
        """A lease on something `w` creates (a new session), taken in its transaction: the
        name is new, so its fence is 1, and it is held once `w` commits."""
        now = self.now()
        w.statements.append(claim(name, holder, now, ttl_s))
        return Lease(name, holder, 1, now + ttl_s)

    async def claim_many(self, names: Sequence[str], holder: str, ttl_s: float) -> list[Lease]:
        """`claim` of each of `names`, in one transaction; returns those `holder` now has."""
        if not names:
            return []
        now = self.now()
        async with self._write() as w:
            w.statements.append(claim_many(names, holder, now, ttl_s))
        marks = ", ".join("?" * len(names))
        found = await self._rows(HELD_AMONG.format(names=marks), (holder, now, *names))
        return sorted((lease(r) for r in found), key=lambda held: held.name)

    async def extend(self, holder: str, ttl_s: float, names: str = "%") -> int:
        """Extend every lease `holder` still holds whose name is like `names` (a LIKE
        pattern): one statement of its own, outside the fleet's write lock (it numbers
        nothing; row locks order it against a claim). Returns how many it extended."""
        statement = renew(holder, self.now(), ttl_s, names)
        return await self._alone(statement.sql, statement.params)

    async def holding(self, holder: str, names: str = "%") -> set[str]:
        """The names like `names` of the leases `holder` holds now."""
        return {r["name"] for r in await self._rows(HOLDING, (holder, self.now(), names))}

    async def live(self, names: str) -> int:
        """How many leases like `names` some holder holds now."""
        [row] = await self._rows(LIVE, (names, self.now()))
        return int(row["live"])

    async def soonest_expiry(self, prefix: str, besides: str) -> float | None:
        """When the first lease named `prefix...` that another holder than `besides` holds
        runs out, unless renewed (None: there is none)."""
        [row] = await self._rows(SOONEST, (f"{prefix}%", besides, self.now()))
        return float(row["soonest"]) if row["soonest"] is not None else None

    async def unheld_with_work(self, limit: int) -> list[str]:
        """Up to `limit` sessions with work waiting whose lease no replica holds."""
        found = await self._rows(UNHELD_WITH_WORK, (self.now(), limit))
        return [r["session_id"] for r in found]

    async def release(self, held: Lease) -> None:
        """Give the lease up now (if it is still this holding), for another to take at once."""
        async with self._write() as w:
            w.statements.append(release(held))

    async def all(self) -> list[Lease]:
        """Every lease but the sessions', held or expired (the `active` one, each replica's
        own): `switchboard status` and /metrics."""
        return [lease(r) for r in await self._rows(ALL, (f"{SESSION}%",))]

    async def sessions_held(self) -> dict[str, int]:
        """How many sessions each replica holds now."""
        found = await self._rows(HELD_BY, (f"{SESSION}%", self.now()))
        return {r["holder"]: int(r["held"]) for r in found}

    async def holders(self, session_ids: Sequence[str]) -> dict[str, str]:
        """The replica running each of these sessions now, of those one holds."""
        if not session_ids:
            return {}
        names = [SESSION + s for s in session_ids]
        sql = HOLDER_OF.format(names=", ".join("?" * len(names)))
        found = await self._rows(sql, (*names, self.now()))
        return {r["name"].removeprefix(SESSION): r["holder"] for r in found}
