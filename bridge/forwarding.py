"""Platform requests taken by a standby replica and handled by the active one (issue 14).

Every replica serves the platforms' HTTP doors behind a load balancer, but only the active
replica runs turns, sends and polls. A standby checks a request as the active replica would
(signature or secret token, shape), then stores it here, body and headers as they came, and
the platform gets its 200 once that commit is done: nothing acknowledged is lost, and a
retry of the same platform id is acknowledged and not stored twice.

The active replica follows the ledger: each stored request publishes `RequestForwarded`,
which reaches it through the database's notifications at once, and it hands the stored
requests to the platform's front (`Replay`), which handles them as if they had come in
there: oldest first within a workspace, the workspaces side by side. A request is removed
once handled; one handled twice after a crash is dropped by the bridge's own dedupe (its
platform id was marked seen).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping

from bridge.events import RequestForwarded
from bridge.store import BridgeStore, Forwarded
from runtime import Runtime
from runtime.errors import StoreConflictError

log = logging.getLogger(__name__)

Replay = Callable[[Forwarded], Awaitable[None]]
ATTEMPTS = 5  # a request that fails this often is dropped, with an error in the log
NOT_READY_S = 300.0  # how long a bot that is not running (restarting) is waited for
BATCH = 100


class NotReady(Exception):
    """The workspace's bot is not running here yet (starting, or restarting in a reload): the
    request waits for it, in order, without spending an attempt."""


class Forwarding:
    def __init__(self, runtime: Runtime, store: BridgeStore) -> None:
        self._runtime = runtime
        self._store = store
        self._replayers: Mapping[str, Replay] = {}
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self.handled = 0

    async def forward(
        self,
        platform: str,
        workspace_id: str,
        dedupe_key: str | None,
        body: str,
        headers: Mapping[str, str],
        query: str = "",
    ) -> bool:
        """Store a request for the active replica; False: a copy with the same platform id
        was stored already (a platform retry), so this one is acknowledged and dropped."""
        key = f"{platform}:{workspace_id}:{dedupe_key}" if dedupe_key else None
        try:
            async with self._store.write() as tx:
                tx.forward(platform, workspace_id, key, body, dict(headers), query)
        except StoreConflictError:
            return False
        return True

    def start(self, replayers: Mapping[str, Replay]) -> None:
        """On the active replica: handle what standbys stored, now and as they store more;
        `replayers` by platform name."""
        self._replayers = replayers
        self._wake.set()
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self._watch(), name="forwarded-watch"),
            loop.create_task(self._replay_all(), name="forwarded-replay"),
        ]

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []

    async def _watch(self) -> None:
        async for event in self._runtime.events():
            if isinstance(event.data, RequestForwarded):
                self._wake.set()

    async def _replay_all(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            try:
                while batch := await self._store.forwarded(limit=BATCH):
                    await asyncio.gather(*(self._in_order(q) for q in _by_place(batch)))
            except Exception:  # the store failed: the next notice, or a second, tries again
                log.exception("forwarded requests not read; trying again")
                await asyncio.sleep(1.0)
                self._wake.set()

    async def _in_order(self, requests: list[Forwarded]) -> None:
        for request in requests:
            await self._replay(request)

    async def _replay(self, request: Forwarded) -> None:
        """Hand one request to its platform's front; tried again (holding the later ones
        back, in order) until it is handled, or dropped after `ATTEMPTS` failures."""
        fields = {"forwarded": request.id, "platform": request.platform}
        attempts = request.attempts
        waited = 0.0
        while True:
            replay = self._replayers.get(request.platform)
            if replay is None:
                log.error("forwarded request for a platform not served here; dropped", extra=fields)
                break
            try:
                await replay(request)
                break
            except NotReady:
                if waited < NOT_READY_S:
                    waited += 1.0
                    await asyncio.sleep(1.0)
                    continue
                log.error("forwarded request dropped: its bot never came up", extra=fields)
                break
            except Exception as exc:
                attempts += 1
                error = f"{type(exc).__name__}: {str(exc)[:300]}"
                log.warning(
                    "forwarded request failed", exc_info=True, extra={**fields, "attempt": attempts}
                )
                if attempts >= ATTEMPTS:
                    log.error("forwarded request dropped after its attempts", extra=fields)
                    break
                async with self._store.write() as tx:
                    tx.forwarded_failed(request.id, error)
                await asyncio.sleep(min(0.5 * 2**attempts, 8.0))
        async with self._store.write() as tx:
            tx.forwarded_done(request.id)
        self.handled += 1


def _by_place(batch: list[Forwarded]) -> list[list[Forwarded]]:
    """One queue per workspace and platform, each in the order its requests came: a chat's
    messages stay in order, and one workspace's requests do not wait behind another's."""
    queues: dict[tuple[str, str], list[Forwarded]] = {}
    for request in batch:
        queues.setdefault((request.platform, request.workspace_id), []).append(request)
    return list(queues.values())
