"""Who reads the ledger for chat, and from where: one process reads the whole of it;
replicas read each workspace's events where the workspace is served (`serve`), and the
events of no workspace on the active replica (`running`), each follower from its own cursor
(`bridge/dispatch_cursor.py`). What each event becomes is the dispatcher's (`handle`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable

from bridge.dispatch_cursor import CURSOR, ONE_PROCESS, advance, cursor_of
from bridge.events import DeliveryQueued
from bridge.placement import Placement
from bridge.store.store import BridgeStore
from runtime.engine import Runtime
from runtime.events import Event
from runtime.tasks import cancel_and_wait

log = logging.getLogger(__name__)

KEEP_EVERY = 1000  # events a follower passes before it stores how far it is, if nothing did


class LedgerFollowers:
    def __init__(
        self,
        runtime: Runtime,
        store: BridgeStore,
        placement: Placement,
        handle: Callable[[Event], Awaitable[None]],
    ) -> None:
        self._runtime = runtime
        self._store = store
        self._placement = placement
        self._handle = handle
        self._workspaces: dict[str, str | None] = {}  # by session id: whose events they are
        self._followers: dict[str | None, asyncio.Task[None]] = {}  # by workspace id
        self._handled_by: dict[str | None, int] = {}  # how far each follower is
        self._handled = asyncio.Condition()
        self._closed = False

    @contextlib.asynccontextmanager
    async def following(self) -> AsyncIterator[None]:
        """Until the stop, when every follower stops (what it had not handled is handled
        again where it resumes: its cursor moves with what handling it wrote) and none
        starts any more."""
        self._closed = False
        yield
        self._closed = True
        followers, self._followers = list(self._followers.values()), {}
        await cancel_and_wait(*followers)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """One process: the whole ledger. Replicas: the events of no workspace."""
        self._follow(None)
        yield
        await cancel_and_wait(self._followers.pop(None, None))

    def serve(self, workspace_id: str) -> None:
        """Replicas: the workspace's events, from where they were last handled."""
        if not self._placement.everything and self._placement.serves(workspace_id):
            self._follow(workspace_id)

    async def leave(self, workspace_id: str) -> None:
        await cancel_and_wait(self._followers.pop(workspace_id, None))
        self._handled_by.pop(workspace_id, None)

    def _follow(self, workspace_id: str | None) -> None:
        if workspace_id in self._followers or self._closed:
            return
        self._handled_by[workspace_id] = 0  # `caught_up` waits for it from now on
        self._followers[workspace_id] = asyncio.get_running_loop().create_task(
            self.follow(workspace_id),
            name=f"bridge-dispatch-{workspace_id or ''}",
            context=self._placement.context(workspace_id) if workspace_id else None,
        )

    @property
    def handled_seq(self) -> int:
        """How far every follower here has handled the ledger."""
        return min(self._handled_by.values(), default=self._runtime.store.last_seq)

    async def follow(self, workspace_id: str | None = None) -> None:
        """Follow the ledger from where the last run stopped; each event handled once."""
        everything = self._placement.everything
        name = ONE_PROCESS if everything else cursor_of(workspace_id)
        CURSOR.set(name)  # this task's handlers advance it
        cursor = await self._store.cursor(name) or await self._store.cursor(ONE_PROCESS)
        await self._handled_up_to(workspace_id, cursor)
        kept = cursor  # how far the stored cursor is known to be
        async for event in self._runtime.events(after_seq=cursor):
            try:
                if everything or await self._workspace_of(event) == workspace_id:
                    await self._handle(event)
            except Exception:
                log.exception(
                    "dispatch failed", extra={"event_seq": event.seq, "event_type": event.type}
                )
            if event.seq is None:
                continue
            await self._handled_up_to(workspace_id, event.seq)
            if event.seq - kept >= KEEP_EVERY:  # what needed no write is passed for good too
                kept = await self._keep(event.seq)

    async def _keep(self, seq: int) -> int:
        """The follower's cursor moved to `seq`: events another workspace's follower handles,
        and those that needed no write, are not read again, and may be pruned."""
        try:
            async with self._store.write() as tx:
                advance(tx, seq)
        except Exception as exc:  # the next one tries again; what is read again is harmless
            log.warning("dispatch cursor not kept", extra={"error": repr(exc)})
        return seq

    async def handled_everywhere(self, workspace_ids: list[str]) -> int:
        """How far the ledger is handled for good: what no follower would read again."""
        if self._placement.everything:
            return await self._store.cursor(ONE_PROCESS)
        seed = await self._store.cursor(ONE_PROCESS)
        names = [cursor_of(None), *(cursor_of(w) for w in workspace_ids)]
        return min([await self._store.cursor(name) or seed for name in names])

    async def _workspace_of(self, event: Event) -> str | None:
        """Whose the event is: its session's workspace (a session another replica created is
        known here from now on), or None."""
        if isinstance(event.data, DeliveryQueued):
            return event.data.workspace_id
        session_id = event.session_id
        if session_id is None:
            return None
        if session_id not in self._workspaces:
            record = await self._runtime.known(session_id)
            workspace = record.agent_id.partition("/")[0] if record is not None else None
            self._workspaces[session_id] = workspace
        return self._workspaces[session_id]

    async def _handled_up_to(self, workspace_id: str | None, seq: int) -> None:
        async with self._handled:
            self._handled_by[workspace_id] = max(self._handled_by.get(workspace_id, 0), seq)
            self._handled.notify_all()

    async def caught_up(self, seq: int) -> None:
        """Until every ledger event up to `seq` has been handled."""
        async with self._handled:
            await self._handled.wait_for(lambda: self.handled_seq >= seq)
