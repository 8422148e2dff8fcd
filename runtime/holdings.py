"""The leases this process holds, kept alive together (`runtime/store/leases.py` has the rows).

Claimed in one transaction (`claim`), renewed in one statement (`renew`, by their owner
every quarter of their time to live), let go at once when their work is done (`release`). A
lease missing from a renewal was taken over by another replica: `on_lost` is told at once,
so its work stops (its writes would be refused by their fence anyway). A renewal that keeps
failing loses every lease once three quarters of their time has passed without one, the
point after which another replica may already hold them. Lease times are the database's
(`Leases.align`, again every `ALIGN_S`), so a replica whose clock is off neither steals a
live lease nor keeps a dead one.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Sequence

from runtime.records import Lease
from runtime.store.leases import Leases
from runtime.store.writer import Writer

log = logging.getLogger(__name__)

ALIGN_S = 60.0  # how often the database's clock is read again
MOST_AT_ONCE = 500  # names claimed in one transaction


class Holdings:
    def __init__(
        self,
        leases: Leases,
        holder: str,
        ttl_s: float,
        on_lost: Callable[[list[Lease], str], None],
        names: str = "%",
    ) -> None:
        """`names`: a LIKE pattern every name this holds matches (`active`, `session:%`), so
        two holdings of one replica renew only their own."""
        self._leases = leases
        self.holder = holder
        self.names = names
        self.ttl_s = ttl_s
        self._on_lost = on_lost
        self.held: dict[str, Lease] = {}
        self.lost = 0  # leases taken over by another replica, or let lapse, since the start
        self._renewed_at: float | None = None  # loop time of the last renewal that answered
        self._aligned_at: float | None = None

    def lease(self, name: str) -> Lease | None:
        return self.held.get(name)

    async def claim(self, names: Iterable[str]) -> list[Lease]:
        """Take each of `names` that is free, expired or already this holder's; returns
        those newly held (a lease taken from an expired holder has a higher fence)."""
        await self._align_if_due()
        wanted = [n for n in dict.fromkeys(names) if n not in self.held]
        taken: list[Lease] = []
        for start in range(0, len(wanted), MOST_AT_ONCE):
            batch = wanted[start : start + MOST_AT_ONCE]
            claimed = await self._leases.claim_many(batch, self.holder, self.ttl_s)
            if claimed and not self.held:  # the renewals' clock starts again
                self._renewed_at = asyncio.get_running_loop().time()
            for lease in claimed:  # held as soon as committed: a later batch may fail
                self.held[lease.name] = lease
            taken.extend(claimed)
        return taken

    def claim_new(self, w: Writer, name: str) -> None:
        """Take the lease on something `w` creates, in its transaction: held once it commits
        (nothing holds a name never used, so it cannot fail but with the transaction)."""
        lease = self._leases.claim_new(w, name, self.holder, self.ttl_s)

        def held() -> None:
            if not self.held:  # the renewals' clock starts again
                self._renewed_at = asyncio.get_running_loop().time()
            self.held[name] = lease

        w.after_commit(held)

    async def release(self, names: Sequence[str]) -> None:
        """Give these up now, for another replica to take at once (one that fails to be
        released runs out by itself)."""
        for name in names:
            lease = self.held.pop(name, None)
            if lease is None:
                continue
            try:
                await self._leases.release(lease)
            except Exception as exc:
                log.warning("lease not released", extra={"lease": name, "error": str(exc)})

    async def release_all(self) -> None:
        await self.release(list(self.held))

    async def renew(self) -> None:
        """One renewal of everything held: what is missing from it was lost."""
        if not self.held:
            return
        loop = asyncio.get_running_loop()
        expected = dict(self.held)  # a release meanwhile changes `held`, not what is checked
        try:  # bounded: a database that does not answer must not keep the leases held here
            async with asyncio.timeout(max(self.ttl_s / 4, 1.0)):  # not wait_for: see publishing
                kept = await self._extend(expected)
        except Exception as exc:
            since = loop.time() - (self._renewed_at or loop.time())
            if since > self.ttl_s * 0.75:
                self._lose(list(self.held.values()), f"not renewed in time ({exc!r})")
            else:
                log.warning("leases not renewed; trying again", extra={"error": repr(exc)})
            return
        self._renewed_at = loop.time()
        gone = [lease for name, lease in expected.items() if name not in kept]
        gone = [lease for lease in gone if self.held.get(lease.name) == lease]
        if gone:
            self._lose(gone, "another replica holds them now")

    async def _extend(self, expected: dict[str, Lease]) -> set[str]:
        """The names still held after one renewal: read back only when the count extended
        is not the count expected (another replica took one over), which is rare."""
        await self._align_if_due()
        extended = await self._leases.extend(self.holder, self.ttl_s, self.names)
        if extended == len(expected):
            return set(expected)
        return await self._leases.holding(self.holder, self.names)

    def _lose(self, gone: list[Lease], why: str) -> None:
        for lease in gone:
            self.held.pop(lease.name, None)
        self.lost += len(gone)
        log.warning(
            "leases lost",
            extra={"holder": self.holder, "leases": len(gone), "first": gone[0].name, "why": why},
        )
        self._on_lost(gone, why)

    async def _align_if_due(self) -> None:
        now = asyncio.get_running_loop().time()
        if self._aligned_at is not None and now - self._aligned_at < ALIGN_S:
            return
        try:
            skew = await self._leases.align()
        except Exception as exc:  # the claim or renewal that follows says what is wrong
            log.warning("database clock not read", extra={"error": repr(exc)})
            return
        self._aligned_at = now
        if abs(skew) > 1.0:
            log.warning(
                "this machine's clock is off from the database's; lease times follow the "
                "database's",
                extra={"skew_s": round(skew, 3), "holder": self.holder},
            )
