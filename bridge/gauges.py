"""The runtime's live turns and queues per workspace, read from the runtime's memory at
scrape time (the outbox backlog comes from the bridge store's `outbox_backlog`)."""

from __future__ import annotations

from dataclasses import dataclass

from runtime.engine import Runtime


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
