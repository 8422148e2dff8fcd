"""The console's live feeds: a workspace's session rows (a session's page) and the boards of
workspaces (the overviews), read again whenever the ledger has an event for them (a step, a
turn starting or ending, a message queued, a delivery failing, a pairing request) and once a
`tick_s` while something runs, for the time it has taken. Driven by the runtime's ledger
feed, not by polling the store."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from typing import TypeVar

from bridge.admin.board import Board, read_board
from bridge.admin.records import SessionRow
from bridge.admin.view import AdminView, workspace_of_agent
from bridge.service import Bridge
from config.schema import SwitchboardConfig
from runtime import Event, SessionState
from runtime.payloads import AssistantTextDelta
from runtime.tasks import cancel_and_wait

TICK_S = 1.0
GAP_S = 0.25  # a feed reads the store at most this often: a busy ledger has many events a second
T = TypeVar("T")


async def live_sessions(
    bridge: Bridge, config: SwitchboardConfig, workspace_id: str, *, tick_s: float = TICK_S
) -> AsyncGenerator[list[SessionRow], None]:
    """The workspace's session rows now, then each time they may have changed. Runs until the
    consumer stops iterating (or the runtime closes)."""
    view = AdminView(bridge, config)
    runtime = bridge.runtime

    def ours(event: Event) -> bool:
        session = runtime.sessions.get(event.session_id or "")
        return session is not None and workspace_of_agent(session.record.agent_id) == workspace_id

    async def rows() -> list[SessionRow]:
        return await view.sessions(workspace_id)

    # Ticking on as long as the rows shown say a turn runs: its end may come without an
    # event after it (the ledger's turn_finished precedes the session going idle).
    def running(found: list[SessionRow]) -> bool:
        return any(r.state is SessionState.RUNNING for r in found)

    async for found in _following(bridge, rows, ours, running, tick_s, GAP_S):
        yield found


async def live_boards(
    bridge: Bridge, workspace_ids: Sequence[str], *, tick_s: float = TICK_S
) -> AsyncGenerator[list[Board], None]:
    """The boards of these workspaces now, then each time something may have changed: any
    event but a streamed word (a delivery or a pairing request has no session of its own)."""

    async def boards() -> list[Board]:
        return [await read_board(bridge, w) for w in workspace_ids]

    def busy(found: list[Board]) -> bool:
        return any(b.busy for b in found)

    async for found in _following(bridge, boards, lambda _: True, busy, tick_s, GAP_S):
        yield found


async def _following(
    bridge: Bridge,
    read: Callable[[], Awaitable[T]],
    ours: Callable[[Event], bool],
    busy: Callable[[T], bool],
    tick_s: float,
    gap_s: float,
) -> AsyncGenerator[T, None]:
    """`read()` now, then after each event `ours` takes, and each `tick_s` while the last
    read is `busy`; never twice within `gap_s` (the events in between are read at once)."""
    runtime = bridge.runtime
    changed = asyncio.Event()
    closed = asyncio.Event()

    async def follow() -> None:
        try:
            async for event in runtime.events():
                if not isinstance(event.data, AssistantTextDelta) and ours(event):
                    changed.set()
        finally:
            closed.set()
            changed.set()

    follower = asyncio.get_running_loop().create_task(follow(), name="admin-live")
    try:
        await asyncio.sleep(0)  # subscribed before the first read
        while not closed.is_set():
            changed.clear()
            found = await read()
            yield found
            timeout = tick_s if busy(found) else None
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout):  # not wait_for: it can eat a cancel (3.11)
                    await changed.wait()
            await asyncio.sleep(gap_s)
    finally:
        await cancel_and_wait(follower)
