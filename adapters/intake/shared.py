"""The intake table in the shared database (PostgreSQL replicas): every replica's doors store
into it, so a request acknowledged outlives the replica that took it, and the active replica
hands them on. Each stored request publishes `RequestForwarded` in its commit, which reaches
every replica's event feed through the database's notifications: the active replica's
replayer wakes at once."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from adapters.intake.record import Arrival
from bridge.events import RequestForwarded
from bridge.service import Bridge
from bridge.store.records import StoredRequest


class SharedIntake:
    def __init__(self, bridge: Bridge) -> None:
        self._bridge = bridge
        self._watching: asyncio.Task[None] | None = None

    async def put(self, arrival: Arrival) -> bool:
        return await self._bridge.store.take_request(arrival.request)

    async def pending(self, after_id: int, limit: int) -> list[StoredRequest]:
        return await self._bridge.store.intake(after_id, limit)

    async def done(self, ids: list[int]) -> None:
        async with self._bridge.store.write() as tx:
            for request_id in ids:
                tx.request_handled(request_id)

    async def failed(self, request_id: int, error: str) -> None:
        async with self._bridge.store.write() as tx:
            tx.request_failed(request_id, error)

    def watch(self, wake: Callable[[], None]) -> None:
        """Call `wake` whenever any replica stores a request."""
        self._watching = asyncio.get_running_loop().create_task(
            self._watch(wake), name="intake-watch"
        )

    async def close(self) -> None:
        if self._watching is not None:
            self._watching.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watching
            self._watching = None

    async def _watch(self, wake: Callable[[], None]) -> None:
        async for event in self._bridge.runtime.events():
            if isinstance(event.data, RequestForwarded):
                wake()
