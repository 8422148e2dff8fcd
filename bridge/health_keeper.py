"""Keeps what `bridge/health.py` finds in the store every few seconds while the process runs,
so `switchboard status` (another process) says it too, with how fresh it is."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable

from bridge.health import HealthLine
from bridge.store.health import HealthStore
from runtime.clock import Clock
from runtime.tasks import cancel_and_wait

log = logging.getLogger(__name__)

KEEP_EVERY_S = 5.0


class HealthKeeper:
    def __init__(
        self,
        store: HealthStore,
        clock: Clock,
        found: Callable[[], list[HealthLine]],
        replica: Callable[[], str | None] = lambda: None,
    ) -> None:
        """`replica`: this replica's name (None: one process); its rows are its own."""
        self._store = store
        self._clock = clock
        self._found = found
        self._replica = replica

    async def keep(self) -> None:
        replica = self._replica()
        at = f"@{replica}" if replica else ""
        rows = [(h.subject + at, h.workspace_id, h.ok, h.words) for h in self._found()]
        await self._store.keep(rows, replica, self._clock.wall())

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        task = asyncio.get_running_loop().create_task(self._loop(), name="health")
        yield
        await cancel_and_wait(task)

    async def _loop(self) -> None:
        while True:
            try:
                await self.keep()
            except Exception as exc:  # a store that refuses now: the next round tries again
                log.warning("health not kept", extra={"error": repr(exc)})
            await self._clock.sleep(KEEP_EVERY_S)
