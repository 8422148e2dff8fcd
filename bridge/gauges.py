"""The reads behind the gauges /metrics computes at scrape time, one named function each: the
bridge's outbox backlog from its own `deliveries` table, and the runtime's live turns and
queues from the runtime's memory (the bridge never reads the runtime's tables)."""

from __future__ import annotations

from dataclasses import dataclass

from runtime import Runtime
from runtime.store import Store

OUTBOX_BACKLOG_SQL = """
SELECT json_extract(route, '$.platform') AS platform,
       json_extract(route, '$.workspace_id') AS workspace,
       status, COUNT(*) AS n, MIN(created_at) AS oldest
FROM deliveries
WHERE status IN ('pending', 'sending')
GROUP BY platform, workspace, status
"""


@dataclass(frozen=True, slots=True)
class Backlog:
    platform: str
    workspace: str
    status: str  # pending | sending
    count: int
    oldest_created_at: float


async def outbox_backlog(store: Store) -> list[Backlog]:
    """Deliveries the platform has not accepted yet, per platform, workspace and status."""
    rows = await store.fetch_all(OUTBOX_BACKLOG_SQL)
    return [
        Backlog(r["platform"], r["workspace"], r["status"], int(r["n"]), float(r["oldest"]))
        for r in rows
    ]


@dataclass(slots=True)
class Work:
    running: int = 0  # turns running
    queued: int = 0  # messages waiting for a turn
    dequeued: int = 0  # messages taken into a running turn


def work_by_workspace(runtime: Runtime) -> dict[str, Work]:
    """Running turns and queue depth per workspace, child agents counted with their parent's
    workspace (runtime agent ids are `workspace/agent[/child-n]`)."""
    work: dict[str, Work] = {}
    for session in runtime.sessions.values():
        w = work.setdefault(session.record.agent_id.split("/", 1)[0], Work())
        w.queued += len(session.queue)
        if session.running is not None:
            w.running += 1
            w.dequeued += len(session.running.message_ids)
    return work
