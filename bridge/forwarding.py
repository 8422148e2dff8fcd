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

`Replaying` is the handing over, from any `RequestSource`: the bridge store's
`forwarded_requests` here, or the door process's inbox (`adapters/doors/`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Protocol

from bridge.events import RequestForwarded
from bridge.store import BridgeStore, Forwarded
from runtime import Runtime
from runtime.errors import StoreConflictError

log = logging.getLogger(__name__)

Replay = Callable[[Forwarded], Awaitable[None]]
ATTEMPTS = 5  # a request that fails this often is dropped, with an error in the log
NOT_READY_S = 300.0  # how long a bot that is not running (restarting) is waited for
BATCH = 100
BEHIND_S = 10.0  # a request waiting longer than this is said in the log (every BEHIND_S)


class NotReady(Exception):
    """The workspace's bot is not running here yet (starting, or restarting in a reload): the
    request waits for it, in order, without spending an attempt."""


class RequestSource(Protocol):
    """Where checked requests wait to be handled, oldest first."""

    async def pending(self, limit: int) -> list[Forwarded]: ...

    async def done(self, ids: list[int]) -> None: ...

    async def failed(self, request_id: int, error: str) -> None: ...


class Replaying:
    """Hands what waits in a source to the platforms' fronts, now and each time `wake` is
    called: oldest first within a workspace, the workspaces side by side."""

    def __init__(self, source: RequestSource, name: str) -> None:
        self._source = source
        self._name = name
        self._replayers: Mapping[str, Replay] = {}
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._said_behind = 0.0
        self.handled = 0

    def start(self, replayers: Mapping[str, Replay]) -> None:
        """`replayers` by platform name."""
        self._replayers = replayers
        self._wake.set()
        self._task = asyncio.get_running_loop().create_task(self._replay_all(), name=self._name)

    def wake(self) -> None:
        self._wake.set()

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _replay_all(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            try:
                while batch := await self._source.pending(limit=BATCH):
                    self._say_if_behind(batch[0])
                    await asyncio.gather(*(self._in_order(q) for q in _by_place(batch)))
                    await self._source.done([request.id for request in batch])
                    self.handled += len(batch)
            except Exception:  # the store failed: the next notice, or a second, tries again
                log.exception("stored requests not read; trying again", extra={"of": self._name})
                await asyncio.sleep(1.0)
                self._wake.set()

    def _say_if_behind(self, oldest: Forwarded) -> None:
        """Turns are falling behind what comes in: say how far, at most every `BEHIND_S`."""
        now = time.time()
        waited = now - oldest.received_at
        if waited > BEHIND_S and now - self._said_behind > BEHIND_S:
            self._said_behind = now
            log.warning(
                "stored requests wait to be handled",
                extra={"of": self._name, "oldest_waited_s": round(waited, 1)},
            )

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
                log.error("stored request for a platform not served here; dropped", extra=fields)
                return
            try:
                await replay(request)
                return
            except NotReady:
                if waited < NOT_READY_S:
                    waited += 1.0
                    await asyncio.sleep(1.0)
                    continue
                log.error("stored request dropped: its bot never came up", extra=fields)
                return
            except Exception as exc:
                attempts += 1
                error = f"{type(exc).__name__}: {str(exc)[:300]}"
                log.warning(
                    "stored request failed", exc_info=True, extra={**fields, "attempt": attempts}
                )
                if attempts >= ATTEMPTS:
                    log.error("stored request dropped after its attempts", extra=fields)
                    return
                await self._source.failed(request.id, error)
                await asyncio.sleep(min(0.5 * 2**attempts, 8.0))


class Forwarding:
    """A standby's side (`forward`) and the active replica's (`start`)."""

    def __init__(self, runtime: Runtime, store: BridgeStore) -> None:
        self._runtime = runtime
        self._store = store
        self._replaying = Replaying(_Forwarded(store), "forwarded-replay")
        self._watching: asyncio.Task[None] | None = None

    @property
    def handled(self) -> int:
        return self._replaying.handled

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
        self._replaying.start(replayers)
        self._watching = asyncio.get_running_loop().create_task(
            self._watch(), name="forwarded-watch"
        )

    async def close(self) -> None:
        if self._watching is not None:
            self._watching.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watching
            self._watching = None
        await self._replaying.close()

    async def _watch(self) -> None:
        async for event in self._runtime.events():
            if isinstance(event.data, RequestForwarded):
                self._replaying.wake()


class _Forwarded:
    """The bridge store's `forwarded_requests` as a `RequestSource`."""

    def __init__(self, store: BridgeStore) -> None:
        self._store = store

    async def pending(self, limit: int) -> list[Forwarded]:
        return await self._store.forwarded(limit=limit)

    async def done(self, ids: list[int]) -> None:
        async with self._store.write() as tx:
            for forwarded_id in ids:
                tx.forwarded_done(forwarded_id)

    async def failed(self, request_id: int, error: str) -> None:
        async with self._store.write() as tx:
            tx.forwarded_failed(request_id, error)


def _by_place(batch: list[Forwarded]) -> list[list[Forwarded]]:
    """One queue per place (a conversation, where the door process named it; else the whole
    workspace), each in the order its requests came: a chat's messages stay in order, and one
    conversation's requests do not wait behind another's."""
    queues: dict[tuple[str, str, str], list[Forwarded]] = {}
    for request in batch:
        where = (request.platform, request.workspace_id, request.place)
        queues.setdefault(where, []).append(request)
    return list(queues.values())
