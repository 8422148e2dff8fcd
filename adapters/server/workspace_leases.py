"""Which workspaces' platform side this replica runs, when replicas share PostgreSQL (issue 42).

A workspace's bots are polled, what its doors stored is replayed, its sessions' events are
dispatched to chat and its deliveries sent by the replica holding its lease,
`workspace:<id>`, one replica at a time (`bridge/placement.py` says which are here; the turns
of its sessions run wherever their own leases are, `runtime/homes.py`). So a bot is polled in
one place (Telegram allows one `getUpdates` a bot; two replicas polling it would take each
other's updates) and each platform's rate limits are paced in one place, and the platform
side of many workspaces spreads over the fleet.

A workspace rather than each bot: a workspace's bots share its operators, its conversations'
bindings, its routing (a notification goes to its primary operator on the first platform they
use) and its reloads, so all of them are decided in one place.

Every replica, every quarter of the lease's time:

- renews what it holds, in one statement; a workspace missing from the renewal was taken over
  (a pause past its expiry): its work here stops at once, and its late writes are refused by
  the lease's fence anyway;
- claims free workspaces (never held, let go, or expired with a dead replica) up to its share:
  the configured workspaces over the live replicas, rounded up;
- lets go of one workspace over its share, held for at least `SETTLE_LEASES` lease times (so
  a replica that joins gets its share, and none moves back and forth), after stopping its
  work here; and of a workspace no longer configured.

The stop first stops the work (the process's parts close), then gives every lease up for the
others to take at once."""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Awaitable, Callable

from bridge.placement import Placement
from runtime.holdings import Holdings
from runtime.records import Lease
from runtime.store.store import Store
from runtime.tasks import cancel_and_wait

log = logging.getLogger(__name__)

WORKSPACE = "workspace:"  # a workspace's lease: `workspace:<id>`
REPLICA = "replica:"  # each replica's own lease (`runtime/homes.py`): the live ones
REPLICAS = REPLICA + "%"
EXPIRY_MARGIN_S = 0.1  # a round this long after another replica's lease ran out
SETTLE_LEASES = 2  # a workspace is held this many lease times at least before it is let go

Serve = Callable[[str], Awaitable[None]]
Leave = Callable[[str, bool], Awaitable[None]]  # at once, or letting what is under way finish


class WorkspaceLeases:
    def __init__(
        self,
        store: Store,
        holder: str,
        ttl_s: float,
        workspaces: Callable[[], list[str]],
        placement: Placement,
        changing: asyncio.Lock,
        *,
        serve: Serve,
        leave: Leave,
    ) -> None:
        """`workspaces`: those configured now; `placement` is told which are held here;
        `serve` and `leave` start and stop a workspace's platform side here, one at a time
        with a reload and the stop (`changing`: a reload's bots and a workspace's coming or
        going never interleave)."""
        self._leases = store.leases
        self._placement = placement
        self.holder = holder
        self.ttl_s = ttl_s
        self._workspaces = workspaces
        self._serve = serve
        self._leave = leave
        self._holdings = Holdings(store.leases, holder, ttl_s, self._lost, names=WORKSPACE + "%")
        self._served: dict[str, float] = {}  # workspace id -> when it started here (loop time)
        self._gone: list[str] = []  # taken over: their work here stops at the next round
        self._tasks: list[asyncio.Task[None]] = []
        self._claiming = True
        self._changing = changing
        self.lost = 0

    @property
    def served(self) -> list[str]:
        return sorted(self._served)

    def start(self) -> None:
        """Renewals in a task of their own, so that starting a workspace's bots (which asks
        the platform) never holds one back past the leases' expiry."""
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self._renewing(), name="workspace-leases-renew"),
            loop.create_task(self._balancing(), name="workspace-leases-balance"),
        ]

    async def stop_claiming(self) -> None:
        """At the stop: nothing more is taken, nor let go (a serve under way is cut: the
        stop closes what it started); what is held is renewed until `release`."""
        self._claiming = False
        await cancel_and_wait(*self._tasks[1:])  # the balancing

    async def release(self) -> None:
        """Every workspace's work here has stopped (the parts closed): its leases given up,
        for the other replicas to take at once."""
        await cancel_and_wait(*self._tasks)
        self._tasks = []
        for workspace_id in self._served:
            self._placement.drop(workspace_id)
        self._served.clear()
        await self._holdings.release_all()

    async def _renewing(self) -> None:
        while True:
            await asyncio.sleep(self.ttl_s / 4)
            try:
                await self._holdings.renew()
            except Exception:
                log.exception("workspace leases not renewed; trying again")

    async def _balancing(self) -> None:
        """A round every quarter of the lease's time, and one as another replica's lease on
        a workspace runs out (it died): a live one renews long before, so that never comes."""
        while True:
            wait_s = self.ttl_s / 4
            try:
                await self._stop_gone()
                if self._claiming:
                    wait_s = min(wait_s, await self._balance())
            except Exception:
                log.exception("workspaces not balanced; trying again")
            await asyncio.sleep(wait_s)

    def _lost(self, lost: list[Lease], why: str) -> None:
        """Called by a renewal: these are another replica's now."""
        for lease in lost:
            workspace_id = lease.name.removeprefix(WORKSPACE)
            log.warning(
                "workspace taken over by another replica; its work here stops",
                extra={"workspace": workspace_id, "why": why},
            )
            self._placement.drop(workspace_id)  # nothing more starts for it here
            self._gone.append(workspace_id)
            self.lost += 1

    async def _stop_gone(self) -> None:
        gone, self._gone = self._gone, []
        for workspace_id in gone:
            if self._served.pop(workspace_id, None) is not None:
                async with self._changing:
                    await self._leave(workspace_id, False)

    async def _balance(self) -> float:
        """One round; how long until another replica's lease (on a workspace, or its own,
        which counts it live) runs out."""
        now = self._leases.now()
        others = [lease for lease in await self._leases.all() if lease.holder != self.holder]
        expiring = [
            lease.expires_at - now
            for lease in others
            if lease.name.startswith((WORKSPACE, REPLICA)) and lease.expires_at >= now
        ]
        configured = self._workspaces()
        live = max(1, await self._leases.live(REPLICAS))
        share = math.ceil(len(configured) / live)
        for workspace_id in [w for w in self._served if w not in configured]:
            await self._let_go(workspace_id, "no longer configured")
        room = share - len(self._served)
        if room > 0:
            taken = {lease.name for lease in others if lease.expires_at >= now}
            await self._claim(configured, room, taken)
        elif room < 0:
            at, settle_s = asyncio.get_running_loop().time(), SETTLE_LEASES * self.ttl_s
            settled = [w for w, since in self._served.items() if at - since >= settle_s]
            if settled:
                await self._let_go(settled[-1], "over this replica's share")
        return min(expiring, default=self.ttl_s) + EXPIRY_MARGIN_S

    async def _claim(self, configured: list[str], room: int, taken: set[str]) -> None:
        free = [w for w in configured if WORKSPACE + w not in taken and w not in self._served]
        if not free:
            return
        for lease in await self._holdings.claim([WORKSPACE + w for w in free[:room]]):
            workspace_id = lease.name.removeprefix(WORKSPACE)
            async with self._changing:
                if self._holdings.lease(lease.name) is not lease:
                    continue  # lost again meanwhile: not served here
                log.info(
                    "serving a workspace here",
                    extra={"workspace": workspace_id, "replica": self.holder, "fence": lease.fence},
                )
                self._served[workspace_id] = asyncio.get_running_loop().time()
                self._placement.hold(workspace_id, lease)
                try:
                    with self._placement.fenced(workspace_id):  # and the tasks it starts
                        await self._serve(workspace_id)
                except Exception:
                    log.exception(
                        "workspace not served; let go for another try",
                        extra={"workspace": workspace_id},
                    )
                    failed = True
                else:
                    failed = False
            if failed:
                await self._let_go(workspace_id, "it could not be served here")

    async def _let_go(self, workspace_id: str, why: str) -> None:
        log.info("letting a workspace go", extra={"workspace": workspace_id, "why": why})
        async with self._changing:
            self._served.pop(workspace_id, None)
            self._placement.drop(workspace_id)
            try:
                await self._leave(workspace_id, True)
            except Exception:  # what is left is cut: the next replica takes it up
                log.exception("workspace not fully left", extra={"workspace": workspace_id})
        await self._holdings.release([WORKSPACE + workspace_id])
