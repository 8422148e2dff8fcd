"""Which replica is the active one, when several share a PostgreSQL database (issue 14).

One lease, `active`, held with a heartbeat: its holder does what the fleet does once (each
part's `once`: the schedules' clock, the wake-ups' alarm, pruning, the pairing answers, the
events of no workspace, the console). Turns run on every replica (`runtime/homes.py`), and
each workspace's bots and sends on the replica holding its lease (`workspace_leases.py`).
The others try to take the `active` lease every second (`role.py` turns taking it into
starting that work). The active replica renews it every quarter of its time to live; if it
dies, its lease runs out and a standby takes it within `ttl_s` plus a second and carries on.

Every write of the active replica is fenced by its lease (`Store.fence_with`): a replica
that was paused (a long GC, a network partition) past its lease's expiry and wakes up finds
its writes refused, and stops at once rather than send or write over its successor.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections.abc import Awaitable, Callable

from runtime.holdings import Holdings
from runtime.records import Lease
from runtime.store.store import Store

log = logging.getLogger(__name__)

ACTIVE = "active"  # the lease's name
REPLICA_ENV = "SWITCHBOARD_REPLICA"
STANDBY_TRY_S = 1.0


def replica_name() -> str:
    """This process's name among the replicas: `SWITCHBOARD_REPLICA`, else host and pid."""
    return os.environ.get(REPLICA_ENV) or f"{socket.gethostname()}:{os.getpid()}"


class Leadership:
    def __init__(
        self,
        store: Store,
        holder: str,
        ttl_s: float,
        *,
        on_gained: Callable[[Lease], Awaitable[None]],
        on_lost: Callable[[str], None],
    ) -> None:
        self._store = store
        self.holder = holder
        self.ttl_s = ttl_s
        self._on_gained = on_gained
        self._on_lost = on_lost
        self._holdings = Holdings(store.leases, holder, ttl_s, self._lease_lost, names=ACTIVE)
        self._lost_why: str | None = None
        self.settled = asyncio.Event()  # the first try is over (and its activation, if won)
        self.failed: BaseException | None = None  # the activation's error, if it failed

    @property
    def lease(self) -> Lease | None:
        return self._holdings.lease(ACTIVE)

    @property
    def active(self) -> bool:
        return self.lease is not None

    async def run(self) -> None:
        """Try for the lease until this replica has it, then keep it; returns only when it
        was lost (after `on_lost`). Taking over runs beside the renewals (it may take longer
        than the lease lasts); an activation that fails raises here."""
        activation: asyncio.Task[None] | None = None
        try:
            while self.lease is None:
                activation = await self._try()
            while self._lost_why is None:
                await asyncio.sleep(self.ttl_s / 4)
                if activation is not None and activation.done():
                    activation.result()  # a failed activation raises
                await self._holdings.renew()
            why = self._lost_why
            log.critical("no longer the active replica; stopping at once", extra={"why": why})
            self._on_lost(why)
        finally:
            if activation is not None and not activation.done():
                activation.cancel()

    async def _try(self) -> asyncio.Task[None] | None:
        """One try for the lease: the activation, when it was taken."""
        try:  # bounded: a database that does not answer must not hold a standby up
            async with asyncio.timeout(max(self.ttl_s / 4, 1.0)):  # not wait_for: see publishing
                taken = await self._holdings.claim([ACTIVE])
        except Exception as exc:
            log.warning("lease not claimed; trying again", extra={"error": repr(exc)})
            taken = []
        if not taken:
            self._standing_by()
            await asyncio.sleep(STANDBY_TRY_S)
            return None
        lease = taken[0]
        self._store.fence_with(lease)
        log.info(
            "this replica is now the active one",
            extra={"replica": self.holder, "fence": lease.fence},
        )
        return asyncio.get_running_loop().create_task(self._activate(lease), name="activation")

    def _standing_by(self) -> None:
        if not self.settled.is_set():
            log.info("standby: another replica is active", extra={"replica": self.holder})
        self.settled.set()

    async def _activate(self, lease: Lease) -> None:
        try:
            await self._on_gained(lease)
        except BaseException as exc:
            self.failed = exc
            raise
        finally:
            self.settled.set()

    def _lease_lost(self, lost: list[Lease], why: str) -> None:
        self._lost_why = why

    async def release(self) -> None:
        """Give the lease up (a clean stop), for a standby to take at once."""
        await self._holdings.release_all()


EXIT_LEASE_LOST = 75  # the process stops at once; a supervisor starts it again as a standby


def exit_at_once(why: str) -> None:
    """A replica that lost its lease must neither write nor send another thing: no clean
    stop (that would drain the outbox), the process ends here."""
    logging.shutdown()
    os._exit(EXIT_LEASE_LOST)
