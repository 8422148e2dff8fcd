"""What `/status` says in chat (a few short lines, readable on a phone: for a session on a
fallback, which model and why not its first), and the notifications no operator has
received, which `/status`, `switchboard status` and the console list."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from bridge import texts
from bridge.activity import ActivityReader, agent_name, duration, plain_error
from bridge.health import HealthLine, summary
from bridge.places import place
from bridge.provider_health import fallback_line, on_fallback
from bridge.store.records import NotificationRouting
from bridge.store.store import BridgeStore
from bridge.types import DeliveryStatus
from config.schema import WorkspaceConfig
from config.timing import zone
from runtime.engine import Runtime
from runtime.store.store import Store

NOT_ROUTED_YET = texts.NOT_ROUTED_YET


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

    @property
    def words(self) -> str:
        """Why no operator has it, in words, with the error where there is one."""
        why = texts.UNDELIVERED_WORDS[self.status]
        error = plain_error(self.error)
        return f"{why}: {error}" if error else why


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
    def __init__(
        self,
        runtime: Runtime,
        store: BridgeStore,
        health: Callable[[WorkspaceConfig], list[HealthLine]] | None = None,
    ) -> None:
        """`health`: the workspace's platform connections and MCP servers (`bridge/health.py`)."""
        self._runtime = runtime
        self._store = store
        self._health = health

    async def text(
        self, session_id: str | None, workspace: WorkspaceConfig, *, bound_agent: str | None = None
    ) -> str:
        """`bound_agent`: the agent a new session here would have (the bindings' choice)."""
        lines = []
        if session_id is None:
            lines.append(texts.STATUS_NO_SESSION)
            if bound_agent is not None:
                lines.append(texts.AGENT_HERE.format(agent=agent_name(bound_agent)))
        else:
            lines += await self._session_lines(session_id, zone(workspace.timezone))
            agent = self._runtime.session(session_id).agent_id
            if bound_agent is not None and bound_agent != agent:
                lines.append(texts.AGENT_REBOUND.format(agent=agent_name(bound_agent)))
        if self._health is not None:
            lines += summary(self._health(workspace))
        lines += await self._delivery_lines(workspace)
        return "\n".join(lines)

    async def _session_lines(self, session_id: str, tz: ZoneInfo) -> list[str]:
        runtime = self._runtime
        records = [s.record for s in runtime.sessions.values()]
        children = [r for r in records if r.parent_session_id == session_id]
        mine = [runtime.session(session_id), *children]
        own, *kids = await ActivityReader(runtime.store, self._store).read(mine)
        now = runtime.clock.wall()
        lines = [texts.STATUS_DOING.format(agent=own.agent, what=own.what_for(now, you=True))]
        if own.turn_since is not None and own.since != own.turn_since:
            turn = duration(max(0.0, now - own.turn_since))
            lines.append(texts.STATUS_TURN.format(duration=turn))
        lines += [
            texts.STATUS_CHILD.format(agent=k.agent, what=k.what_for(now, you=True))
            for k in kids
            if k.active
        ]
        s = runtime.status(session_id)
        mode = texts.STATUS_MODE.format(mode=s.mode.value, words=texts.QUEUE_MODE_WORDS[s.mode])
        queue = texts.STATUS_QUEUE.format(count=own.queued, mode=mode)
        lines.append(queue if own.queued else texts.STATUS_QUEUE_EMPTY.format(mode=mode))
        tokens = s.context_tokens  # measured in this process, else as the last turn left it
        if tokens is None:
            tokens = await runtime.store.history.last_context_tokens(session_id)
        if tokens is None:
            lines.append(texts.CONTEXT_UNKNOWN.format(window=s.context_window))
        else:
            share = tokens / s.context_window
            lines.append(
                texts.CONTEXT_USE.format(tokens=tokens, window=s.context_window, share=share)
            )
        if (fallback := on_fallback(runtime, session_id)) is not None:
            lines.append(fallback_line(fallback, tz, now))
        if own.last_error:
            lines.append(texts.STATUS_LAST_ERROR.format(error=own.last_error))
        return lines

    async def _delivery_lines(self, workspace: WorkspaceConfig) -> list[str]:
        failed = await self._store.failed_routes(workspace.id)
        names = await self._store.conversation_names() if failed else {}
        lines = [
            texts.STATUS_CANNOT_DELIVER.format(
                where=place(f.conversation_key, names).where, reason=plain_error(f.reason)
            )
            for f in failed
        ]
        undelivered = await undelivered_notifications(
            self._runtime.store, self._store, workspace.id
        )
        if not undelivered:
            return [*lines, texts.STATUS_UNDELIVERED_NONE]
        lines.append(texts.STATUS_UNDELIVERED.format(count=len(undelivered)))
        lines += [
            texts.STATUS_UNDELIVERED_LINE.format(
                summary=u.summary, agent=agent_name(u.requested_by_agent_id), status=u.words
            )
            for u in undelivered
        ]
        return lines
