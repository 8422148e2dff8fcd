"""What `/status` and `switchboard status` report."""

from __future__ import annotations

from dataclasses import dataclass

from config.schema import WorkspaceConfig
from runtime import Runtime
from runtime.store import Store

UNDELIVERED_SQL = """
SELECT n.notification_id, n.agent_id, n.requested_by_agent_id, n.summary, n.created_at,
       COALESCE(d.status, nr.status, 'not routed yet') AS status, d.last_error
FROM notifications n
LEFT JOIN notification_routes nr ON nr.notification_id = n.notification_id
LEFT JOIN deliveries d ON d.id = nr.delivery_id
WHERE (nr.status IS NULL OR nr.status = 'unroutable' OR d.status = 'failed')
  AND n.agent_id LIKE ?
ORDER BY n.created_at
"""


@dataclass(frozen=True, slots=True)
class Undelivered:
    notification_id: str
    agent_id: str
    requested_by_agent_id: str
    summary: str
    status: str
    error: str | None


async def undelivered_notifications(store: Store, workspace_id: str) -> list[Undelivered]:
    rows = await store.fetch_all(UNDELIVERED_SQL, (f"{workspace_id}/%",))
    return [
        Undelivered(
            r["notification_id"],
            r["agent_id"],
            r["requested_by_agent_id"],
            r["summary"],
            r["status"],
            r["last_error"],
        )
        for r in rows
    ]


async def status_text(runtime: Runtime, session_id: str | None, workspace: WorkspaceConfig) -> str:
    lines = []
    if session_id is None:
        lines.append("No session here yet: send a message to start one.")
    else:
        s = runtime.status(session_id)
        if s.state == "running":
            lines.append(
                f"Agent {s.agent_id} is working: {s.step} ({s.elapsed_s:.1f}s, run {s.run_id})."
            )
        else:
            lines.append(f"Agent {s.agent_id} is idle.")
        lines.append(f"Queue: {s.queued} waiting; mode {s.mode}.")
        if s.children:
            lines.append(f"Child agents: {len(s.children)}.")
    failed = await runtime.store.fetch_all(
        "SELECT conversation_key, reason FROM failed_routes WHERE workspace_id = ?"
        " ORDER BY failed_at",
        (workspace.id,),
    )
    lines += [f"Cannot deliver to {r['conversation_key']}: {r['reason']}" for r in failed]
    undelivered = await undelivered_notifications(runtime.store, workspace.id)
    if undelivered:
        lines.append(f"Undelivered notifications: {len(undelivered)}")
        lines += [
            f"- {u.summary} (from {u.requested_by_agent_id}, {u.status})" for u in undelivered
        ]
    else:
        lines.append("Undelivered notifications: none.")
    return "\n".join(lines)
