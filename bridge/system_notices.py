"""Notices from Switchboard itself, not from an agent, about the server as a whole (its door
process keeps failing): to each workspace's primary operator, through the usual routing and
the outbox, as a budget's warning goes (bridge/spend/gate.py)."""

from __future__ import annotations

import hashlib
import logging

from bridge import texts
from bridge.routing import Router
from bridge.store.store import BridgeStore
from bridge.types import DeliveryKind
from config.current import CurrentConfig

log = logging.getLogger(__name__)


class SystemNotices:
    def __init__(self, current: CurrentConfig, store: BridgeStore, router: Router) -> None:
        self._current = current
        self._store = store
        self._router = router

    async def doors_failing(self, port: int, failures: int, why: str, at: float) -> int:
        """The door process failed to start `failures` times in a row (the last: `why`),
        told at `at` (wall seconds: the notice's key)."""
        text = texts.DOORS_FAILING.format(port=port, failures=failures, why=why)
        return await self.tell_primaries(f"doors_failing_{int(at)}", text)

    async def provider_refused(self, provider: str, why: str, at: float) -> int:
        """A provider refused its key (401/403): it is not tried until a reload."""
        text = texts.PROVIDER_REFUSED.format(provider=provider, why=why)
        which = hashlib.sha256(provider.encode()).hexdigest()[:8]  # two refused at once: both
        return await self.tell_primaries(f"provider_refused_{which}_{int(at)}", text)

    async def tell_primaries(self, key: str, text: str) -> int:
        """`text` to every workspace's primary operator that has a route; how many. `key`
        names this notice (once per key and workspace, should it be told again)."""
        told = 0
        async with self._store.write() as tx:
            for workspace in self._current().workspaces:
                route = self._router.primary_route(workspace)
                if route is None:
                    continue
                intent = f"dlv_system_{key}_{workspace.id}"
                tx.enqueue(intent, route, DeliveryKind.COMMAND_REPLY, text)
                told += 1
        log.info("system notice sent", extra={"notice": key, "primaries": told})
        return told
