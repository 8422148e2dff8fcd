"""Which sessions this replica runs, when replicas share PostgreSQL (issue 42).

A session's turns run on the replica holding its lease, `session:<id>`, one replica at a
time; every write of its work is fenced by that lease (`store/fencing.py`), so a replica
paused past the lease's expiry has its late writes refused. Every replica:

- **claims** sessions with work waiting that no replica holds (`Leases.unheld_with_work`),
  up to its share of the fleet's (`Share`), every quarter of the lease's time and at once
  when a message arrives for a session no one runs; and **takes each up**: its record read
  again, what a crash left of its turn recovered (`recover`, for that session alone), its
  queue read from the store, what arrived for it admitted, its worker started;
- **admits** what arrives for a session it holds: a message submitted on another replica is
  stored `ARRIVED` with a `MessageArrived` hint (`Runtime.submit`), and admitted here as if
  submitted here;
- **lets go** of a session with nothing under way for `IDLE_S` while it holds more than its
  share (so a new replica takes its share as sessions go idle, never mid-turn), and of any
  idle for `LONG_IDLE_S`; a lease it finds taken over stops that
  session's work here at once.

What one replica asks of the one running a session (a stop, an approval), and what each
hears of the others' turns, goes through the ledger: `runtime/across.py`. The replica that
sends (the `active` lease, `adapters/server/leadership.py`) reads every replica's turns there.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import math
from dataclasses import dataclass, replace
from typing import Protocol

from runtime.across import Across
from runtime.admission import Admitting, admit_arrived
from runtime.approvals import Approvals
from runtime.guards import HeldTurns
from runtime.holdings import Holdings
from runtime.messages import QueueStatus
from runtime.payloads import (
    SessionAction,
)
from runtime.queue import SessionQueue
from runtime.records import Lease, SessionRecord
from runtime.recovery import recover
from runtime.results import CompactStatus, StopResult
from runtime.session import Session
from runtime.store import Store, Writer
from runtime.store.fencing import FENCE, fenced_by
from runtime.store.leases import SESSION
from runtime.tasks import cancel_and_wait
from runtime.wakeups import Alarm

log = logging.getLogger(__name__)

IDLE_S = 10.0  # a held session with nothing under way this long is let go, over the share
LONG_IDLE_S = 600.0  # and any, after this long
REPLICA = "replica:"  # each replica's own lease: how many replicas are live


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

    def ensure_worker(self, session: Session) -> None: ...

    async def stop(self, session_id: str, run_id: str, reason: str) -> StopResult: ...

    async def cancel_wakeups(self, session_id: str, by: str, *, retire: bool = False) -> int: ...

    def compact(self, session_id: str) -> CompactStatus: ...


@dataclass(frozen=True, slots=True)
class Share:
    """How many sessions a replica may hold: its part of the fleet's sessions with work (those
    held and those waiting), rounded up, and never more than `most`."""

    most: int
    held_in_fleet: int = 0
    waiting: int = 0
    replicas: int = 1

    @property
    def each(self) -> int:
        fleet = self.held_in_fleet + self.waiting
        return min(self.most, max(1, math.ceil(fleet / self.replicas)))

    def with_new(self) -> Share:
        """The share once a session just created has work too."""
        return replace(self, waiting=self.waiting + 1)


class Homes:
    def __init__(self, home: Home, holder: str, ttl_s: float, most: int) -> None:
        self._home = home
        self._store = home.store
        self.holder = holder
        self.ttl_s = ttl_s
        leases = home.store.leases
        self._sessions = Holdings(leases, holder, ttl_s, self._lost, names=f"{SESSION}%")
        self._me = Holdings(leases, holder, ttl_s, self._gone, names=f"{REPLICA}{holder}")
        self.share = Share(most)
        self._wake = asyncio.Event()
        self._idle_since: dict[str, float] = {}
        self._admitting: dict[str, asyncio.Task[None]] = {}  # by session id
        self._again: set[str] = set()  # sessions whose arrivals are read again when done
        self._tasks: list[asyncio.Task[None]] = []
        self.across = Across(home, self)  # what replicas ask of each other, and hear
        self.taken_up = 0  # sessions taken up since the start
        self.lost = 0

    def lease(self, session_id: str) -> Lease | None:
        """This replica's lease on the session, while it holds it."""
        return self._sessions.lease(SESSION + session_id)

    @property
    def held(self) -> list[str]:
        return [name.removeprefix(SESSION) for name in self._sessions.held]

    def claim_new(self, w: Writer, session_id: str) -> None:
        """A session created here is held from its creating transaction, while this replica
        has room in its share: its first turn runs here, with no claim or take-up."""
        if len(self._sessions.held) < self.share.with_new().each:
            self._sessions.claim_new(w, SESSION + session_id)
            self.share = replace(self.share, held_in_fleet=self.share.held_in_fleet + 1)

    def context(self, session_id: str) -> contextvars.Context:
        """A context whose writes are fenced by the session's lease (a worker's)."""
        context = contextvars.copy_context()
        context.run(FENCE.set, self.lease(session_id))
        return context

    async def start(self) -> None:
        await self._me.claim([REPLICA + self.holder])
        self._home.held.elsewhere = lambda session_id, by: self.across.ask(
            session_id, SessionAction.APPROVE_SPEND, by
        )
        loop = asyncio.get_running_loop()
        self._wake.set()  # what waits (a crash's turns, queued messages) is claimed at once
        self._tasks = [
            loop.create_task(self._keep(), name="homes-keep"),
            loop.create_task(self.across.follow(), name="homes-follow"),
        ]

    async def stop(self) -> None:
        """No more claims; what is held is given up (the caller handed its turns back)."""
        await cancel_and_wait(*self._tasks, *self._admitting.values())
        await self.across.close()
        self._tasks = []
        await self._sessions.release_all()
        await self._me.release_all()

    # -- claiming, keeping, letting go ---------------------------------------------------

    async def _keep(self) -> None:
        loop = asyncio.get_running_loop()
        period = self.ttl_s / 4
        renew_at = loop.time() + period
        while True:
            try:
                async with asyncio.timeout(max(renew_at - loop.time(), 0.0)):
                    await self._wake.wait()
            except TimeoutError:
                pass
            self._wake.clear()
            try:
                due = loop.time() >= renew_at
                if due:
                    renew_at = loop.time() + period
                    if not self._me.held:  # it ran out (a pause): this replica is live again
                        await self._me.claim([REPLICA + self.holder])
                    await self._me.renew()
                    await self._sessions.renew()
                await self._claim(recount=due)
                if due:
                    await self._let_go_idle(loop.time())
            except Exception:
                log.exception("sessions not claimed or renewed; trying again")

    async def _claim(self, *, recount: bool) -> None:
        """Claim sessions with work no replica holds, up to the share; the fleet is counted
        again (`recount`) once a renewal period, not on every wake."""
        leases = self._store.leases
        waiting = await leases.unheld_with_work(self.share.most)
        share = self.share
        if recount:
            held, replicas = await leases.live(f"{SESSION}%"), await leases.live(f"{REPLICA}%")
            share = replace(share, held_in_fleet=held, replicas=max(1, replicas))
        self.share = replace(share, waiting=len(waiting))
        room = self.share.each - len(self._sessions.held)
        if room <= 0 or not waiting:
            return
        for lease in await self._sessions.claim(SESSION + s for s in waiting[:room]):
            try:
                await self._take_up(lease)
            except Exception:
                log.exception("session not taken up; let go", extra={"lease": lease.name})
                await self._sessions.release([lease.name])

    async def _take_up(self, lease: Lease) -> None:
        """The session is this replica's now: its state read from the store, afresh."""
        session_id = lease.name.removeprefix(SESSION)
        record = await self._store.session(session_id)
        if record is None:  # a session deleted meanwhile: nothing to run
            await self._sessions.release([lease.name])
            return
        session = self._home.sessions.get(session_id) or self._home.adopt(record)
        session.record = record
        session.elsewhere = None
        async with session.admission:
            with fenced_by(lease):
                await recover(self._store, session_id)
                session.queue = SessionQueue()
                for entry in await self._store.messages(
                    session_id=session_id, statuses=[QueueStatus.QUEUED]
                ):
                    session.queue.push(entry)
                await self._admit_arrived(session)
        self.taken_up += 1
        log.info("session taken up", extra={"session_id": session_id, "replica": self.holder})
        self._home.ensure_worker(session)

    async def _admit_arrived(self, session: Session) -> None:
        """What arrived for the session, admitted in the order it was stored (the caller
        holds its admission lock, under its fence)."""
        for arrived in await self._store.messages(
            session_id=session.id, statuses=[QueueStatus.ARRIVED]
        ):
            await admit_arrived(self._home.admitting, session, arrived)

    async def _let_go_idle(self, now: float) -> None:
        """Sessions idle for `IDLE_S` are let go while this replica holds more than its share
        (another took less), and all idle ones after `LONG_IDLE_S`."""
        over = len(self._sessions.held) - self.share.each
        for session_id in self.held:
            session = self._home.sessions.get(session_id)
            busy = session is None or session.tasks or len(session.queue) or session.running
            if busy or session_id in self._admitting:
                self._idle_since.pop(session_id, None)
                continue
            idle = now - self._idle_since.setdefault(session_id, now)
            if (over > 0 and idle >= IDLE_S) or idle >= LONG_IDLE_S:
                del self._idle_since[session_id]
                await self._sessions.release([SESSION + session_id])
                over -= 1

    def _lost(self, gone: list[Lease], why: str) -> None:
        """Another replica holds these now (this one was paused past their expiry): their
        work here stops at once; its writes would be refused by their fences anyway."""
        self.lost += len(gone)
        for lease in gone:
            session = self._home.sessions.get(lease.name.removeprefix(SESSION))
            if session is None:
                continue
            for task in session.tasks:
                task.cancel()
            session.queue = SessionQueue()
            log.warning("session lost to another replica", extra={"session_id": session.id})

    def wake(self) -> None:
        """Claim at once: work waits that no replica may hold."""
        self._wake.set()

    def _gone(self, gone: list[Lease], why: str) -> None:
        """This replica's own lease ran out (its sessions' with it): taken again at the next
        renewal."""

    async def hold(self, session_id: str) -> bool:
        """This replica runs the session now, taking it if no replica does; False: another
        one runs it."""
        if self.lease(session_id) is not None:
            return True
        for lease in await self._sessions.claim([SESSION + session_id]):
            await self._take_up(lease)
        return self.lease(session_id) is not None

    def admit_soon(self, session: Session) -> None:
        if session.id in self._admitting:
            self._again.add(session.id)
            return
        task = asyncio.get_running_loop().create_task(
            self._admit(session), name=f"admit-{session.id}"
        )
        self._admitting[session.id] = task

    async def _admit(self, session: Session) -> None:
        try:
            while True:
                self._again.discard(session.id)
                lease = self.lease(session.id)
                if lease is None:  # let go or lost meanwhile: whoever takes it admits them
                    self._wake.set()
                    return
                async with session.admission:
                    with fenced_by(lease):
                        await self._admit_arrived(session)
                if session.id not in self._again:
                    return
        except Exception:
            log.exception("arrived messages not admitted", extra={"session_id": session.id})
        finally:
            del self._admitting[session.id]
