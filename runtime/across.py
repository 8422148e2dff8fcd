"""What replicas ask of each other, and hear, through the shared ledger (issue 42).

A session's live state is where its turn runs (`runtime/homes.py`); the other replicas reach
it through events, each a hint that wakes them at once:

- **asked**: a stop of a turn running elsewhere (`StopAsked`, waited for until the turn has
  ended there); a held turn's approval, its wake-ups' cancelling, a compaction
  (`SessionAsked`): done by the replica running the session as if asked there;
- **heard**: every replica follows the ledger: a message arrived for a session it holds is
  admitted; a session created elsewhere is known here; an approval answered elsewhere lets
  its waiting call go on; wake-ups set elsewhere reach the alarm; and a turn running
  elsewhere is seen here (`Session.elsewhere`: its step, a budget holding it), for `/status`,
  `/stop` and the console of the replica that sends.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any, Protocol

from runtime.admission import Admitting
from runtime.approvals import Approvals
from runtime.errors import StaleRunError, UnknownRunError
from runtime.events import Event
from runtime.guards import HeldTurns
from runtime.messages import QueueStatus
from runtime.payloads import (
    ApprovalDecided,
    MessageArrived,
    Progress,
    QueueModeChanged,
    RunRecovered,
    SessionAction,
    SessionAsked,
    SessionCreated,
    SpendHeld,
    SpendReleased,
    StopAsked,
    TurnFinished,
    TurnStarted,
    WakeupCancelled,
    WakeupFired,
    WakeupScheduled,
)
from runtime.records import Lease, RunRecord, RunStatus, SessionRecord
from runtime.results import CompactStatus, StopResult, StopStatus
from runtime.session import Elsewhere, Session
from runtime.spend import HoldKind
from runtime.store.fencing import fenced_by
from runtime.store.store import Store
from runtime.wakeups import Alarm, is_wakeup

log = logging.getLogger(__name__)

# What makes a session created on another replica known here: its creation, or its first
# message (heard before its creation, which is no hint, may be).
NEWS = (SessionCreated, MessageArrived, TurnStarted)
STOP_WAIT_S = 30.0  # how long a stop asked of another replica is waited for
STOP_POLL_S = 0.2  # a stopped turn not heard of here: how often the store is read


class Home(Protocol):
    """What the homes need of the runtime."""

    store: Store
    sessions: dict[str, Session]
    approvals: Approvals
    alarm: Alarm

    held: HeldTurns

    @property
    def admitting(self) -> Admitting: ...

    def adopt(self, record: SessionRecord) -> Session: ...

    async def known(self, session_id: str) -> SessionRecord | None: ...

    def ensure_worker(self, session: Session) -> None: ...

    async def stop(self, session_id: str, run_id: str, reason: str) -> StopResult: ...

    async def cancel_wakeups(self, session_id: str, by: str, *, retire: bool = False) -> int: ...

    def compact(self, session_id: str) -> CompactStatus: ...

    def leave(self, session_id: str) -> bool: ...


class Holding(Protocol):
    """What asking and hearing need of this replica's sessions (`runtime/homes.py`)."""

    def lease(self, session_id: str) -> Lease | None: ...

    async def hold(self, session_id: str) -> bool: ...

    def admit_soon(self, session: Session) -> None: ...

    def wake(self) -> None: ...

    async def held_elsewhere(self, session_id: str) -> bool: ...


class Across:
    def __init__(self, home: Home, homes: Holding) -> None:
        self._home = home
        self._homes = homes
        self._store = home.store
        self._tasks: set[asyncio.Task[None]] = set()  # asked of or by another replica

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    # -- asking other replicas ---------------------------------------------------------

    async def stop_elsewhere(
        self, session: Session, run_id: str, reason: str, *, silent: bool = False
    ) -> StopResult:
        """Stop a turn this replica does not run: asked through the ledger of the replica
        running it, and waited for (up to `STOP_WAIT_S`) until it has ended there. A turn cut
        off that no replica runs is taken here first (recovered: it has ended)."""
        run = await self._store.run(run_id)
        if run is None or run.session_id != session.id:
            raise UnknownRunError(f"session {session.id} has no run {run_id!r}")
        running = run.status is RunStatus.RUNNING
        cut_off = running and not await self._homes.held_elsewhere(session.id)
        if cut_off and await self._homes.hold(session.id):  # the crash's recovery ends it
            run = await self._store.run(run_id) or run
        if run.status is RunStatus.RUNNING:
            asked = StopAsked(run_id=run_id, reason=reason, silent=silent)
            await self._store.emit(Event(asked, session.id, run_id))
            run = await self._ended(session, run_id)
        if run.status in (RunStatus.STOPPED, RunStatus.RUNNING):
            return StopResult(StopStatus.STOPPED, run_id)
        raise StaleRunError(f"run {run_id} already ended ({run.status}); nothing to stop")

    async def _ended(self, session: Session, run_id: str) -> RunRecord:
        """The run once it has ended (heard, or read from the store), or as it stands after
        `STOP_WAIT_S`."""
        try:
            async with asyncio.timeout(STOP_WAIT_S):
                while True:
                    running = session.elsewhere
                    if running is not None and running.run_id == run_id:
                        await running.ended.wait()
                    run = await self._store.run(run_id)
                    assert run is not None
                    if run.status is not RunStatus.RUNNING:
                        return run
                    await asyncio.sleep(STOP_POLL_S)
        except TimeoutError:
            log.warning("a turn asked to stop elsewhere has not ended", extra={"run_id": run_id})
        run = await self._store.run(run_id)
        assert run is not None
        return run

    def ask(self, session_id: str, action: SessionAction, by: str = "") -> None:
        """Ask the replica running the session to do `action` there (at once, in the
        background: the answer is what it does)."""
        asked = Event(SessionAsked(action=action, by=by), session_id)
        self._in_background(self._store.emit(asked), f"ask-{action}")

    async def cancel_wakeups_elsewhere(self, session: Session, by: str, retire: bool) -> int:
        """/stop, /new for a session another replica runs: its wake-ups are cancelled there;
        how many it has (pending, and fired but not started), as the store has them."""
        pending = await self._store.wakeups.pending_of(session.id)
        statuses = [QueueStatus.ARRIVED, QueueStatus.QUEUED]
        waiting = await self._store.messages(session_id=session.id, statuses=statuses)
        asked = SessionAsked(action=SessionAction.CANCEL_WAKEUPS, by=by, retire=retire)
        await self._store.emit(Event(asked, session.id))
        return len(pending) + sum(1 for entry in waiting if is_wakeup(entry.message))

    def compact_elsewhere(self, session: Session) -> CompactStatus:
        """/compact for a session this replica does not run: asked of the replica running
        its turn; an idle one is taken here and compacted."""
        if session.elsewhere is not None:
            self.ask(session.id, SessionAction.COMPACT)
            return CompactStatus.AT_NEXT_STEP
        self._in_background(self._here(session.id, SessionAction.COMPACT), "compact")
        return CompactStatus.STARTED

    def leave_elsewhere(self, session: Session, keeps_memory: bool) -> bool:
        """/new for a session this replica does not run: what should last of it is kept
        where its turns run, once the turn under way there is over; an idle one is taken
        here and left. Returns `keeps_memory` (whether a flush follows)."""
        if session.elsewhere is not None:
            self.ask(session.id, SessionAction.LEAVE)
        else:
            self._in_background(self._here(session.id, SessionAction.LEAVE), "leave")
        return keeps_memory

    async def _here(self, session_id: str, action: SessionAction) -> None:
        if await self._homes.hold(session_id):
            await self._do(session_id, SessionAsked(action=action))
        else:  # another replica took it meanwhile
            self.ask(session_id, action)

    def _in_background(self, work: Coroutine[Any, Any, object], name: str) -> None:
        task = asyncio.get_running_loop().create_task(self._logged(work), name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    @staticmethod
    async def _logged(work: Coroutine[Any, Any, object]) -> None:
        try:
            await work
        except Exception:
            log.exception("asking another replica failed")

    # -- what other replicas ask of this one ---------------------------------------------

    async def follow(self, after_seq: int) -> None:
        async for event in self._store.feed.subscribe(after_seq):
            try:
                await self._heard(event)
            except Exception:
                log.exception("event not followed", extra={"event_seq": event.seq})

    async def _heard(self, event: Event) -> None:
        session_id = event.session_id
        session = self._home.sessions.get(session_id) if session_id else None
        held = session_id is not None and self._homes.lease(session_id) is not None
        if session is None and session_id is not None and isinstance(event.data, NEWS):
            session = await self._known(session_id)  # created on another replica
        match event.data:
            case MessageArrived() if session is not None:
                if held:
                    self._homes.admit_soon(session)
                else:
                    self._homes.wake()
            case StopAsked() as asked if held and session is not None:
                self._stop_soon(session, asked)
            case SessionAsked() as asked if held and session_id is not None:
                await self._do(session_id, asked)  # before what is asked after it (a stop)
            case QueueModeChanged(mode=mode) if session is not None:
                session.record.queue_mode = mode
            case SpendHeld(kind=HoldKind.WAIT, reason=reason) if session and session.elsewhere:
                session.elsewhere.held = reason
            case SpendReleased() if session is not None and session.elsewhere is not None:
                session.elsewhere.held = None
            case ApprovalDecided() as decided:
                self._home.approvals.heard(decided)
            case WakeupScheduled() | WakeupCancelled() | WakeupFired():
                await self._home.alarm.heard(event)
            case TurnStarted() if session is not None and not held and event.run_id:
                session.elsewhere = Elsewhere(event.run_id, asyncio.get_running_loop().time())
            case Progress() as progress if session is not None and session.elsewhere:
                session.elsewhere.step = progress.step
            case TurnFinished(fallback=standing) if session is not None and not held:
                session.standing = standing
                self._ended_elsewhere(session, event.run_id)
            case RunRecovered() if session is not None:
                self._ended_elsewhere(session, event.run_id)

    async def _known(self, session_id: str) -> Session | None:
        """A session another replica created, known here from now on."""
        if await self._home.known(session_id) is None:
            return None
        return self._home.sessions[session_id]

    @staticmethod
    def _ended_elsewhere(session: Session, run_id: str | None) -> None:
        running = session.elsewhere
        if running is not None and running.run_id == run_id:
            running.ended.set()
            session.elsewhere = None

    async def _do(self, session_id: str, asked: SessionAsked) -> None:
        match asked.action:
            case SessionAction.APPROVE_SPEND:
                self._home.held.approve(session_id, asked.by)
            case SessionAction.COMPACT:
                self._home.compact(session_id)
            case SessionAction.LEAVE:
                self._home.leave(session_id)
            case SessionAction.CANCEL_WAKEUPS:
                with fenced_by(self._homes.lease(session_id)):
                    await self._home.cancel_wakeups(session_id, asked.by, retire=asked.retire)

    def _stop_soon(self, session: Session, asked: StopAsked) -> None:
        handle = session.running
        if handle is None or handle.run_id != asked.run_id:
            return  # it ended meanwhile
        handle.silent_stop = handle.silent_stop or asked.silent
        task = asyncio.get_running_loop().create_task(
            self._stopping(session.id, asked), name=f"stop-{asked.run_id}"
        )
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _stopping(self, session_id: str, asked: StopAsked) -> None:
        try:
            await self._home.stop(session_id, asked.run_id, asked.reason)
        except (StaleRunError, UnknownRunError):
            pass  # it ended on its own meanwhile
        except Exception:
            log.exception("a stop asked for elsewhere failed", extra={"run_id": asked.run_id})
