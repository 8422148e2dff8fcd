"""Standby or active: which of the fleet's once-only work this process does.

Every process runs its parts (`Parts.activate`): on PostgreSQL each replica runs the turns of
the sessions it holds (`runtime/homes.py`) and the platform side of the workspaces it holds
(`workspace_leases.py`). What the fleet does once (the schedules' clock, the wake-ups' alarm,
pruning, the pairing answers, the events of no workspace: each part's `once`) runs where the
`active` lease is (`Leadership`): at once on SQLite, where the process is the only one; on
PostgreSQL on the replica that takes the lease, the others standing by for it. Taking it, a
reload and the stop happen one at a time (`changing`)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

from adapters.server.leadership import Leadership
from bridge.parts import Step
from runtime.records import Lease
from runtime.store.store import Store
from runtime.tasks import cancel_and_wait


class Role:
    def __init__(
        self, replica: str, on_lease_lost: Callable[[str], None], activate: Step, lead: Step
    ) -> None:
        """`activate` starts what every process runs (`Parts.activate`); `lead`, what one
        replica of the fleet runs (`Parts.lead`)."""
        self.replica = replica
        self._on_lease_lost = on_lease_lost
        self._activate = activate
        self._lead = lead
        self.leadership: Leadership | None = None  # PostgreSQL: which replica is active
        self.leading: asyncio.Task[None] | None = None  # trying for the lease, then renewing it
        self.changing = asyncio.Lock()  # an activation, a reload or the stop at a time
        self.stopping = False  # set by the stop: no reload or activation starts bots after it
        self.activated = False  # the parts run here

    @property
    def active(self) -> bool:
        """This process does the fleet's once-only work (on SQLite, always; on PostgreSQL,
        while it holds the `active` lease)."""
        return self.leadership is None or self.leadership.active

    async def take_up(self, shared: Store | None, lease_ttl_s: float) -> None:
        """The parts run; without a `shared` store, the fleet's once-only work too. With one,
        a standby trying for the lease: this returns once the first try is over (and, if it
        won, once that work has started)."""
        await self._become(self._activate)
        self.activated = True
        if shared is None:
            await self._become(self._lead)
            return
        self.leadership = Leadership(
            shared,
            self.replica,
            lease_ttl_s,
            on_gained=self._gained,
            on_lost=self._on_lease_lost,
        )
        self.leading = asyncio.get_running_loop().create_task(
            self.leadership.run(), name="leadership"
        )
        settled = asyncio.ensure_future(self.leadership.settled.wait())
        await asyncio.wait({settled, self.leading}, return_when=asyncio.FIRST_COMPLETED)
        settled.cancel()
        if self.leading.done():
            self.leading.result()  # an activation that failed: raised here
        if self.leadership.failed is not None:
            raise self.leadership.failed

    async def _gained(self, lease: Lease) -> None:
        """This standby holds the lease now (its writes are fenced by it)."""
        await self._become(self._lead)

    async def _become(self, start: Step) -> None:
        async with self.changing:  # a reload under way finishes first
            if self.stopping:
                return
            await start()

    @contextlib.asynccontextmanager
    async def stopping_now(self) -> AsyncIterator[None]:
        """For the stop: an activation or a reload under way finishes first; any asked for
        later is refused."""
        self.stopping = True
        async with self.changing:
            yield

    async def stand_down(self) -> None:
        """A standby stops trying for the lease at once; the active replica keeps renewing
        it until its work has stopped (`release`)."""
        if not self.active:
            await self._stop_leading()

    async def release(self, stop_workers: Callable[[], Awaitable[None]]) -> None:
        """The work stopped: no turn runs (`stop_workers`), the lease is no longer renewed
        and is given up, for a standby to take at once."""
        if self.leadership is None:
            return
        await stop_workers()
        await self._stop_leading()
        await self.leadership.release()

    async def _stop_leading(self) -> None:
        await cancel_and_wait(self.leading)
        self.leading = None
