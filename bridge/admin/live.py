"""The console's live feeds: a workspace's session rows, one session's page (its row and its
newest turns) and the boards of workspaces (the overviews), read again whenever the ledger
has an event for them (a step, a turn starting or ending, a message queued, a delivery
failing, a pairing request) and once a `tick_s` while something runs, for the time it has
taken. A page's feed also says which turns started or ended since its last read (`news.py`),
for the page's live region. Driven by the runtime's ledger feed, not by polling the store."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from bridge.admin.board import Board, read_board
from bridge.admin.errors import NotInWorkspace
from bridge.admin.history import History
from bridge.admin.news import is_news, turn_news
from bridge.admin.records import Paged, SessionDetail, SessionRow, TurnView
from bridge.admin.view import AdminView, workspace_of_agent
from bridge.service import Bridge
from config.schema import SwitchboardConfig
from runtime.events import Event
from runtime.payloads import AssistantTextDelta
from runtime.results import SessionState
from runtime.tasks import cancel_and_wait

TICK_S = 1.0
GAP_S = 0.25  # a feed reads the store at most this often: a busy ledger has many events a second
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Live(Generic[T]):
    """One read of a live page, and what it says aloud: the turns of its sessions that
    started or ended since the read before, in words."""

    found: T
    said: list[str]


@dataclass(frozen=True, slots=True)
class SessionPage:
    """What a session's page shows live: its row, and its newest turns (None: the page
    shows older ones, which stay as they are)."""

    detail: SessionDetail
    turns: Paged[TurnView] | None


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

    async for found, _ in _following(bridge, rows, ours, running, tick_s, GAP_S):
        yield found


async def live_session(
    bridge: Bridge,
    config: SwitchboardConfig,
    workspace_id: str,
    session_id: str,
    *,
    newest: bool,
    tick_s: float = TICK_S,
) -> AsyncGenerator[Live[SessionPage], None]:
    """The session's page now (`newest`: with its newest turns), then each time an event of
    the session may have changed it; ends if the session leaves the workspace."""
    view, history = AdminView(bridge, config), History(bridge, config)

    async def page() -> SessionPage:
        detail = await view.session(workspace_id, session_id)
        turns = None
        if newest:
            turns = await history.turns(workspace_id, session_id, older=None, newer=None)
        return SessionPage(detail, turns)

    def busy(found: SessionPage) -> bool:
        runs = found.turns.items if found.turns is not None else []
        return found.detail.row.state is SessionState.RUNNING or any(
            t.status == "running" for t in runs
        )

    def ours(event: Event) -> bool:
        return event.session_id == session_id

    with contextlib.suppress(NotInWorkspace):
        async for found, turns in _following(bridge, page, ours, busy, tick_s, GAP_S):
            row = found.detail.row
            names = {session_id: row.name or row.where}
            yield Live(found, await turn_news(bridge.runtime.store, turns, names))


async def live_boards(
    bridge: Bridge, workspace_ids: Sequence[str], *, tick_s: float = TICK_S
) -> AsyncGenerator[Live[list[Board]], None]:
    """The boards of these workspaces now, then each time something may have changed: any
    event but a streamed word (a delivery or a pairing request has no session of its own)."""

    async def boards() -> list[Board]:
        return [await read_board(bridge, w) for w in workspace_ids]

    def busy(found: list[Board]) -> bool:
        return any(b.busy for b in found)

    async for found, turns in _following(bridge, boards, lambda _: True, busy, tick_s, GAP_S):
        names = {a.session_id: a.name or a.where for b in found for a in b.sessions}
        yield Live(found, await turn_news(bridge.runtime.store, turns, names))


async def _following(
    bridge: Bridge,
    read: Callable[[], Awaitable[T]],
    ours: Callable[[Event], bool],
    busy: Callable[[T], bool],
    tick_s: float,
    gap_s: float,
) -> AsyncGenerator[tuple[T, list[Event]], None]:
    """`read()` now, then after each event `ours` takes, and each `tick_s` while the last
    read is `busy`; never twice within `gap_s` (the events in between are read at once).
    Each read comes with the turn events (`news.is_news`) taken since the read before."""
    runtime = bridge.runtime
    changed = asyncio.Event()
    closed = asyncio.Event()
    turns: list[Event] = []

    async def follow() -> None:
        try:
            async for event in runtime.events():
                if not isinstance(event.data, AssistantTextDelta) and ours(event):
                    if is_news(event):
                        turns.append(event)
                    changed.set()
        finally:
            closed.set()
            changed.set()

    follower = asyncio.get_running_loop().create_task(follow(), name="admin-live")
    try:
        await asyncio.sleep(0)  # subscribed before the first read
        while not closed.is_set():
            changed.clear()
            taken = turns[:]
            turns.clear()
            found = await read()
            yield found, taken
            timeout = tick_s if busy(found) else None
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout):  # not wait_for: it can eat a cancel (3.11)
                    await changed.wait()
            await asyncio.sleep(gap_s)
    finally:
        await cancel_and_wait(follower)
