"""What `/status` and `switchboard status` report."""

from __future__ import annotations

from dataclasses import dataclass

from bridge import texts
from bridge.store import BridgeStore, NotificationRouting
from bridge.types import DeliveryStatus
from config.schema import WorkspaceConfig
from runtime import Runtime, SessionState
from runtime.store import Store

NOT_ROUTED_YET = "not routed yet"


@dataclass(frozen=True, slots=True)
class Undelivered:
    notification_id: str
    agent_id: str
    requested_by_agent_id: str
    summary: str
    status: str  # the delivery's status, else the routing's, else "not routed yet"
    error: str | None
    session_id: str  # of the agent it is for (a child's: its parent's)
    created_at: float


async def undelivered_notifications(
    runtime_store: Store, store: BridgeStore, workspace_id: str
) -> list[Undelivered]:
    """A workspace's notifications that no operator has received: not routed yet, without a
    route, or whose delivery failed."""
    deliveries = await store.notification_deliveries()
    found = []
    for n in await runtime_store.notifications(agent_id_prefix=f"{workspace_id}/"):
        d = deliveries.get(n.notification_id)
        if d is None:
            status, error = NOT_ROUTED_YET, None
        elif d.routing is NotificationRouting.UNROUTABLE:
            status, error = d.routing.value, None
        elif d.delivery_status is DeliveryStatus.FAILED:
            status, error = d.delivery_status.value, d.last_error
        else:
            continue
        found.append(
            Undelivered(
                n.notification_id,
                n.agent_id,
                n.requested_by_agent_id,
                n.summary,
                status,
                error,
                n.session_id,
                n.created_at,
            )
        )
    return found


class Status:
    def __init__(self, runtime: Runtime, store: BridgeStore) -> None:
        self._runtime = runtime
        self._store = store

    async def text(
        self, session_id: str | None, workspace: WorkspaceConfig, *, bound_agent: str | None = None
    ) -> str:
        """`bound_agent`: the agent a new session here would have (the bindings' choice)."""
        lines = []
        if session_id is None:
            lines.append("No session here yet: send a message to start one.")
            if bound_agent is not None:
                lines.append(texts.AGENT_HERE.format(agent=bound_agent))
        else:
            s = self._runtime.status(session_id)
            if s.state is SessionState.RUNNING:
                lines.append(
                    f"Agent {s.agent_id} is working: {s.step} ({s.elapsed_s:.1f}s, run {s.run_id})."
                )
            else:
                lines.append(f"Agent {s.agent_id} is idle.")
            if bound_agent is not None and bound_agent != s.agent_id:
                lines.append(texts.AGENT_REBOUND.format(agent=bound_agent))
            lines.append(f"Queue: {s.queued} waiting; mode {s.mode}.")
            if s.context_tokens is None:
                lines.append(texts.CONTEXT_UNKNOWN.format(window=s.context_window))
            else:
                share = s.context_tokens / s.context_window
                lines.append(
                    texts.CONTEXT_USE.format(
                        tokens=s.context_tokens, window=s.context_window, share=share
                    )
                )
            if s.children:
                lines.append(f"Child agents: {len(s.children)}.")
        failed = await self._store.failed_routes(workspace.id)
        lines += [f"Cannot deliver to {f.conversation_key}: {f.reason}" for f in failed]
        undelivered = await undelivered_notifications(
            self._runtime.store, self._store, workspace.id
        )
        if undelivered:
            lines.append(f"Undelivered notifications: {len(undelivered)}")
            lines += [
                f"- {u.summary} (from {u.requested_by_agent_id}, {u.status})" for u in undelivered
            ]
        else:
            lines.append("Undelivered notifications: none.")
        return "\n".join(lines)
