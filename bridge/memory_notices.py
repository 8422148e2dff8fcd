"""A full memory told to the workspace's primary operator (issue 40): keeping one more memory
removed the least used and oldest (`MemoryEvicted`), which is policy, not a refusal, so the
agent goes on; the primary operator learns which agent, which memory, its limit, the ids
removed (never their text: it is gone) and how to keep more. Through the usual routing and
the outbox, as a budget's hold is told (bridge/spend/notices.py).

Once a day per agent and memory (its scope, and whose for the operator scope): a memory at
its limit makes room at each new memory, and a notice each time would drown the chat. The
intent's key is made of the event's own fields and time, so a replay tells nothing twice."""

from __future__ import annotations

import logging

from bridge import texts
from bridge.dispatch_cursor import advance
from bridge.events import OutputUnroutable
from bridge.routing import Router
from bridge.spend.periods import period_bounds
from bridge.store.store import BridgeStore
from bridge.types import DeliveryKind
from config.timing import zone
from runtime.events import Event
from runtime.payloads import MemoryEvicted

log = logging.getLogger(__name__)


def full_text(evicted: MemoryEvicted) -> str:
    scope = texts.MEMORY_FULL_SCOPES.get(evicted.scope, evicted.scope)
    return texts.MEMORY_FULL.format(
        agent=evicted.agent_id,
        scope=scope.format(operator=evicted.operator_id),
        limit=evicted.limit,
        kept=evicted.kept_id,
        count=len(evicted.memory_ids),
        ids=", ".join(evicted.memory_ids),
        setting=texts.MEMORY_LIMIT_SETTINGS.get(evicted.scope, "the limit"),
    )


class MemoryNotices:
    def __init__(self, store: BridgeStore, router: Router) -> None:
        self._store = store
        self._router = router

    async def evicted(self, event: Event, evicted: MemoryEvicted) -> None:
        session_id = event.session_id  # the session whose turn kept the new memory
        workspace = self._router.workspace_of_session(session_id) if session_id else None
        route = self._router.primary_route(workspace) if workspace else None
        text = full_text(evicted)
        async with self._store.write() as tx:
            if workspace is None or route is None:
                unroutable = OutputUnroutable(
                    kind=DeliveryKind.COMMAND_REPLY, event_seq=event.seq, text=text[:200]
                )
                tx.emit(unroutable, event.session_id, event.run_id)
            else:
                day, _ = period_bounds("day", zone(workspace.timezone), event.at)
                whose = f"{evicted.agent_id}_{evicted.scope}_{evicted.operator_id or ''}"
                intent_id = f"dlv_memory_full_{whose}_{int(day)}"
                tx.enqueue(intent_id, route, DeliveryKind.COMMAND_REPLY, text)
            advance(tx, event.seq)
        log.info(
            "memory full told",
            extra={
                "agent_id": evicted.agent_id,
                "scope": evicted.scope,
                "evicted": len(evicted.memory_ids),
                "routed": route is not None,
            },
        )
