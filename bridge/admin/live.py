"""The console's live feed of a workspace: its sessions' rows, again whenever one of its
sessions has an event (a step, a turn starting or ending, a message queued, a queue mode
changed), and once a `tick_s` while a turn runs, for the elapsed time. Driven by the
runtime's ledger feed, not by polling the store."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator

from bridge.admin.records import SessionRow
from bridge.admin.view import AdminView, workspace_of_agent
from bridge.service import Bridge
from config.schema import SwitchboardConfig
from runtime import SessionState
from runtime.payloads import AssistantTextDelta

TICK_S = 1.0


async def live_sessions(
    bridge: Bridge, config: SwitchboardConfig, workspace_id: str, *, tick_s: float = TICK_S
) -> AsyncGenerator[list[SessionRow], None]:
    """The workspace's session rows now, then each time they may have changed. Runs until the
    consumer stops iterating (or the runtime closes)."""
    view = AdminView(bridge, config)
    runtime = bridge.runtime
    changed = asyncio.Event()
    closed = asyncio.Event()

    def ours(session_id: str | None) -> bool:
        session = runtime.sessions.get(session_id or "")
        return session is not None and workspace_of_agent(session.record.agent_id) == workspace_id

    async def follow() -> None:
        try:
            async for event in runtime.events():
                if not isinstance(event.data, AssistantTextDelta) and ours(event.session_id):
                    changed.set()
        finally:
            closed.set()
            changed.set()

    follower = asyncio.get_running_loop().create_task(follow(), name=f"admin-live-{workspace_id}")
    try:
        await asyncio.sleep(0)  # subscribed before the first rows are read
        while not closed.is_set():
            changed.clear()
            rows = view.sessions(workspace_id)
            yield rows
            # Ticking on as long as the rows shown say a turn runs: its end may come without
            # an event after it (the ledger's turn_finished precedes the session going idle).
            running = any(r.state is SessionState.RUNNING for r in rows)
            timeout = tick_s if running else None
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout):  # not wait_for: it can eat a cancel (3.11)
                    await changed.wait()
    finally:
        follower.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await follower
