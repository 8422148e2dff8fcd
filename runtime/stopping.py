"""Stopping turns: one run on an operator's word (its children with it), and every running
turn at a stop of the process, each handed back at its next safe point."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol

from runtime.clock import Clock
from runtime.errors import StaleRunError, UnknownRunError
from runtime.events import Event
from runtime.payloads import ProgressState
from runtime.records import RunStatus
from runtime.results import StopResult, StopStatus
from runtime.session import Session
from runtime.store.store import Store

log = logging.getLogger(__name__)


class StopElsewhere(Protocol):
    """Stops a turn another replica runs (`Homes.stop_elsewhere`)."""

    async def __call__(
        self, session: Session, run_id: str, reason: str, *, silent: bool = False
    ) -> StopResult: ...


@dataclass(frozen=True, slots=True)
class Stopping:
    store: Store
    clock: Clock
    children: Callable[[Session], list[Session]]
    elsewhere: StopElsewhere | None = None  # replicas: a child running on another one

    async def stop(self, session: Session, run_id: str, reason: str) -> StopResult:
        """Stop the named run: cancel its in-flight request or tools; children stop too."""
        handle = session.running
        if handle is not None and handle.run_id == run_id:
            already = not handle.claim_stop()
            if not already:
                progress = handle.progress(self.clock.monotonic(), ProgressState.CANCEL_REQUESTED)
                await self.store.emit(Event(progress, session.id, run_id))
                handle.request_stop(reason)
                children = self.children(session)
                stopped = await asyncio.gather(
                    *(self._stop_child(c) for c in children), return_exceptions=True
                )
                for child, result in zip(children, stopped, strict=True):
                    if isinstance(result, Exception):  # it ended on its own meanwhile
                        log.info("child not stopped", extra={"session_id": child.id})
            await handle.finished.wait()
            if already:
                return StopResult(StopStatus.ALREADY_STOPPED, run_id)
            ended = await self.store.run(run_id)
            if ended is not None and ended.status is not RunStatus.STOPPED:
                # it ended on its own while this stop recorded itself: the stop came too late
                raise StaleRunError(f"run {run_id} ended ({ended.status}) before the stop")
            return StopResult(StopStatus.STOPPED, run_id)
        run = await self.store.run(run_id)
        if run is None or run.session_id != session.id:
            raise UnknownRunError(f"session {session.id} has no run {run_id!r}")
        if run.status is RunStatus.STOPPED:
            return StopResult(StopStatus.ALREADY_STOPPED, run_id)
        raise StaleRunError(f"run {run_id} already ended ({run.status}); nothing to stop")

    async def _stop_child(self, child: Session) -> None:
        reason = "its parent agent was stopped"
        if child.running is not None:
            child.running.silent_stop = True
            await self.stop(child, child.running.run_id, reason)
        elif child.elsewhere is not None and self.elsewhere is not None:
            await self.elsewhere(child, child.elsewhere.run_id, reason, silent=True)


async def hand_back(sessions: Iterable[Session], grace_s: float) -> int:
    """Every running turn ends at its next safe point (`RunHandle.request_hand_back`: a model
    call is cut at once, tools run to their end), its run left for the next start or another
    replica to resume with nothing cut; waits up to `grace_s` for that. Returns how many
    sessions still had work under way then (the caller cuts it, as a crash would)."""
    sessions = list(sessions)
    for session in sessions:
        if session.running is not None:
            session.running.request_hand_back()
    under_way = [t for s in sessions for t in s.tasks]
    if not under_way:
        return 0
    log.info(
        "waiting for running turns to reach a safe point",
        extra={"sessions": len(under_way), "grace_s": grace_s},
    )
    _, pending = await asyncio.wait(under_way, timeout=grace_s)
    return len(pending)
