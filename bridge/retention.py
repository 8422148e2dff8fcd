"""Keeps a long-lived store bounded (issue 11): every `interval_s` of the runtime's clock,
what nothing needs any more is pruned, in short batches beside the live writes: ledger events
the dispatcher has handled, finished deliveries (and the platform ids of what they posted, but
a notification's, which a reply may still answer), platform ids past every retry window, and
refusal replies past their interval. An error is logged and the next round tries again."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import asdict, dataclass

from bridge.dispatch_cursor import ONE_PROCESS
from bridge.store.store import BridgeStore
from bridge.verdicts import REFUSAL_REPLY_INTERVAL_S
from config.schema import RetentionConfig
from runtime.store.store import Store
from runtime.tasks import cancel_and_wait

log = logging.getLogger(__name__)

DAY_S = 86_400.0


@dataclass(frozen=True, slots=True)
class Pruned:
    """Rows one round removed, by kind."""

    events: int = 0
    deliveries: int = 0
    inbound_seen: int = 0
    refusals: int = 0
    posts: int = 0  # platform ids of delivered chunks (a notification's stay)


class Retention:
    """Pruning on the runtime store's clock (the runtime's)."""

    def __init__(
        self,
        config: RetentionConfig,
        runtime_store: Store,
        store: BridgeStore,
        handled: Callable[[], Awaitable[int]] | None = None,
    ) -> None:
        """`handled`: how far the ledger is dispatched for good (replicas: the least of the
        dispatcher's cursors); else the one process's cursor."""
        self._config = config
        self._runtime_store = runtime_store
        self._store = store
        self._handled = handled or (lambda: store.cursor(ONE_PROCESS))

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Prune every `interval_s` until the stop (never, when it is 0)."""
        task = None
        if self._config.interval_s > 0:
            task = asyncio.get_running_loop().create_task(self._run(), name="retention")
        yield
        await cancel_and_wait(task)

    async def _run(self) -> None:
        while True:
            await self._runtime_store.clock.sleep(self._config.interval_s)
            try:
                await self.prune()
            except Exception:
                log.exception("store pruning failed; trying again next round")

    async def prune(self) -> Pruned:
        """One round: each kind with a retention (not 0) loses its rows older than it."""
        started = time.perf_counter()
        now = self._runtime_store.clock.wall()
        config, store = self._config, self._store

        def cutoff(days: float) -> float | None:
            return now - days * DAY_S if days > 0 else None

        events = deliveries = seen = posts = 0
        if (before := cutoff(config.events_days)) is not None:
            handled = await self._handled()  # what a restart would not replay
            events = await self._runtime_store.prune_events(before, handled)
        if (before := cutoff(config.delivered_days)) is not None:
            deliveries = await store.prune_deliveries(before)
            posts = await store.prune_posts(before)
        if (before := cutoff(config.dedupe_days)) is not None:
            seen = await store.prune_seen(before)
        refusals = await store.prune_refusals(now - REFUSAL_REPLY_INTERVAL_S)
        pruned = Pruned(events, deliveries, seen, refusals, posts)
        elapsed_s = round(time.perf_counter() - started, 3)
        log.info("store pruned", extra={**asdict(pruned), "elapsed_s": elapsed_s})
        return pruned
