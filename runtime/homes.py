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
hears of the others' turns, goes through the ledger: `runtime/across.py`. The replica serving
the session's workspace (`adapters/server/workspace_leases.py`) reads its turns there, and
sends their answers.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from dataclasses import replace

from runtime.across import Across, Home
from runtime.admission import admit_arrived
from runtime.holdings import Holdings
from runtime.messages import QueueStatus
from runtime.payloads import SessionAction
from runtime.queue import SessionQueue
from runtime.records import Lease, RunStatus
from runtime.recovery import recover
from runtime.session import Elsewhere, Session
from runtime.share import Share, busy
from runtime.store.fencing import FENCE, fenced_by
from runtime.store.leases import SESSION
from runtime.store.writer import Writer
from runtime.tasks import cancel_and_wait

log = logging.getLogger(__name__)

FLEET_COUNTED = "replicas in the fleet counted"  # logged when the count changes
IDLE_S = 10.0  # a held session with nothing under way this long is let go, over the share
LONG_IDLE_S = 600.0  # and any, after this long
REPLICA = "replica:"  # each replica's own lease: how many replicas are live
AT_ONCE = 16  # sessions claimed and taken up in one round (more wait for the next)
EXPIRY_MARGIN_S = 0.1  # a claim this long after another replica's lease ran out
NEW_S = 5.0  # a session created here counts as busy this long (its first message is coming)
FAILED_BACKOFF_S = 60.0  # a session whose take-up failed is not claimed again before this


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
        self._wake = asyncio.Event()  # claim now
        self._recount = True  # count the fleet again at the next claim
        # Held and taken up: only these run here (a lease claimed is held at once, but its
        # session runs here once its take-up is done, `lease`).
        self._ready: set[str] = set()
        self._taking: dict[str, asyncio.Future[None]] = {}  # take-ups under way
        self._failed: dict[str, float] = {}  # sessions whose take-up failed: not before then
        self._idle_since: dict[str, float] = {}
        self._new: dict[str, float] = {}  # sessions created here, by when (loop time)
        self._at_expiry: asyncio.TimerHandle | None = None  # a claim when another's runs out
        self._admitting: dict[str, asyncio.Task[None]] = {}  # by session id
        self._again: set[str] = set()  # sessions whose arrivals are read again when done
        self._tasks: list[asyncio.Task[None]] = []
        self.across = Across(home, self)  # what replicas ask of each other, and hear
        self.taken_up = 0  # sessions taken up since the start
        self.lost = 0

    def lease(self, session_id: str) -> Lease | None:
        """This replica's lease on the session, once it runs it here (taken up)."""
        return self._sessions.lease(SESSION + session_id) if session_id in self._ready else None

    @property
    def held(self) -> list[str]:
        return [name.removeprefix(SESSION) for name in self._sessions.held]

    def claim_new(self, w: Writer, session_id: str) -> None:
        """A session created here is held from its creating transaction, while this replica
        has room in its share for work (the idle sessions it holds make no load, and go when
        it is over its share): its first turn runs here, with no claim or take-up."""
        share = self.share.with_new()
        if self._busy() < share.each and len(self._sessions.held) < share.most:
            self._new[session_id] = asyncio.get_running_loop().time()
            self._sessions.claim_new(w, SESSION + session_id)
            w.after_commit(lambda: self._ready.add(session_id))
            self.share = replace(self.share, held_in_fleet=self.share.held_in_fleet + 1)

    def _busy(self) -> int:
        """The sessions held here with work under way or waiting, and those just created
        here (their first message on its way)."""
        now, sessions = asyncio.get_running_loop().time(), self._home.sessions
        for session_id, since in list(self._new.items()):
            if now - since > NEW_S:
                del self._new[session_id]
        working = {s for s in self.held if (session := sessions.get(s)) and busy(session)}
        return len(working | set(self._new))

    def context(self, session_id: str) -> contextvars.Context:
        """A context whose writes are fenced by the session's lease and no other (a worker's:
        whatever task starts it, a workspace's replay, the turns go on wherever that moves)."""
        context = contextvars.copy_context()
        lease = self.lease(session_id)
        context.run(FENCE.set, (lease,) if lease is not None else ())
        return context

    async def start(self) -> None:
        """Every session known here (the bridge reads them), none held until claimed; what
        other replicas' turns do from now on heard, and what runs on them now known."""
        seen = self._store.last_seq  # heard from here on: nothing between is missed
        for record in await self._store.sessions():
            if record.id not in self._home.sessions:
                self._home.adopt(record)
        await self._me.claim([REPLICA + self.holder])
        self._home.held.elsewhere = lambda session_id, by: self.across.ask(
            session_id, SessionAction.APPROVE_SPEND, by
        )
        loop = asyncio.get_running_loop()
        self._wake.set()  # what waits (a crash's turns, queued messages) is claimed at once
        self._tasks = [
            loop.create_task(self._renewing(), name="homes-renew"),
            loop.create_task(self._claiming(), name="homes-claim"),
            loop.create_task(self.across.follow(seen), name="homes-follow"),
        ]
        await self.know_running()

    async def stop(self) -> None:
        """No more claims, nothing more heard or admitted (the leases are still held)."""
        if self._at_expiry is not None:
            self._at_expiry.cancel()
        await cancel_and_wait(*self._tasks, *self._admitting.values())
        await self.across.close()
        self._tasks = []

    async def release(self) -> None:
        """Give every lease up, for other replicas to take at once (no work runs here)."""
        self._ready.clear()
        await self._sessions.release_all()
        await self._me.release_all()

    # -- claiming, keeping, letting go ---------------------------------------------------

    async def _renewing(self) -> None:
        """Every quarter of the lease's time: the leases renewed (in a task of their own, so
        no claim or take-up can hold a renewal back past their expiry), then idle sessions
        let go."""
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(self.ttl_s / 4)
            try:
                if not self._me.held:  # it ran out (a pause): this replica is live again
                    await self._me.claim([REPLICA + self.holder])
                await self._me.renew()
                await self._sessions.renew()
                self._recount = True
                self._wake.set()
                await self._let_go_idle(loop.time())
            except Exception:
                log.exception("leases not renewed; trying again")

    async def _claiming(self) -> None:
        """At once when woken (work waits that no replica may hold), else once a renewal."""
        while True:
            await self._wake.wait()
            self._wake.clear()
            recount, self._recount = self._recount, False
            try:
                if await self._claim(recount=recount):
                    self._wake.set()  # more wait: claimed in the next round
            except Exception:
                log.exception("sessions not claimed; trying again")
                await asyncio.sleep(self.ttl_s / 4)

    async def _claim(self, *, recount: bool) -> bool:
        """Claim sessions with work no replica holds, up to the share, `AT_ONCE` at most a
        round; the fleet is counted again (`recount`) once a renewal period, not on every
        wake. True: more could be claimed now."""
        leases = self._store.leases
        now = asyncio.get_running_loop().time()
        found = await leases.unheld_with_work(self.share.most + len(self._failed))
        waiting = [s for s in found if self._failed.get(s, 0.0) <= now]
        share = self.share
        if recount:
            held, replicas = await leases.live(f"{SESSION}%"), await leases.live(f"{REPLICA}%")
            if max(1, replicas) != share.replicas:
                log.info(FLEET_COUNTED, extra={"replicas": replicas, "replica": self.holder})
            share = replace(share, held_in_fleet=held, replicas=max(1, replicas))
            await self._wake_at_next_expiry()
        self.share = replace(share, waiting=len(waiting))
        room = self.share.each - len(self._sessions.held)
        if room <= 0 or not waiting:
            return False
        wanted = [s for s in waiting[: min(room, AT_ONCE)] if s not in self._taking]
        for lease in await self._sessions.claim(SESSION + s for s in wanted):
            await self._take_up(lease)
        return len(waiting) > AT_ONCE and room > AT_ONCE

    async def _wake_at_next_expiry(self) -> None:
        """A replica that stops renewing (it died) loses its sessions as its own lease runs
        out (they are renewed together): claim them then, not up to a renewal period later.
        A live replica's lease is renewed long before its expiry, which never comes."""
        leases = self._store.leases
        soonest = await leases.soonest_expiry(REPLICA, self.holder)
        if self._at_expiry is not None:
            self._at_expiry.cancel()
        if soonest is not None:
            loop = asyncio.get_running_loop()
            wait_s = soonest - leases.now() + EXPIRY_MARGIN_S
            self._at_expiry = loop.call_later(wait_s, self._expired)

    def _expired(self) -> None:
        """Another replica's lease ran out: the fleet counted again (its share is the
        others' now), then its sessions claimed."""
        self._recount = True
        self._wake.set()

    async def _take_up(self, lease: Lease) -> None:
        """The session is this replica's now: its state read from the store, afresh, before
        anything runs it here (`lease` says it is not held until then)."""
        session_id = lease.name.removeprefix(SESSION)
        if session_id in self._ready or session_id in self._taking:
            return
        taking = self._taking[session_id] = asyncio.get_running_loop().create_future()
        try:
            session = await self._taken_up(session_id, lease)
        except Exception:
            log.exception("session not taken up; let go", extra={"session_id": session_id})
            self._failed[session_id] = asyncio.get_running_loop().time() + FAILED_BACKOFF_S
            await self._sessions.release([lease.name])
            return
        finally:
            del self._taking[session_id]
            if not taking.done():
                taking.set_result(None)
        if session is None:
            return
        self._failed.pop(session_id, None)
        self._ready.add(session_id)
        self.taken_up += 1
        log.info("session taken up", extra={"session_id": session_id, "replica": self.holder})
        self._home.ensure_worker(session)
        self.admit_soon(session)  # what arrived while it was taken up

    async def _taken_up(self, session_id: str, lease: Lease) -> Session | None:
        record = await self._store.session(session_id)
        if record is None:  # a session deleted meanwhile: nothing to run
            await self._sessions.release([lease.name])
            return None
        session = self._home.sessions.get(session_id) or self._home.adopt(record)
        if session.tasks:  # work of an earlier hold, lost, still ending: it ends first
            await asyncio.wait(session.tasks)
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
        return session

    async def _admit_arrived(self, session: Session) -> None:
        """What arrived for the session, admitted in the order it was stored (the caller
        holds its admission lock, under its fence)."""
        for arrived in await self._store.messages(
            session_id=session.id, statuses=[QueueStatus.ARRIVED]
        ):
            await admit_arrived(self._home.admitting, session, arrived)

    async def _let_go_idle(self, now: float) -> None:
        """Sessions idle for `IDLE_S` are let go while this replica holds more than its share
        (another took less) or is full with work waiting, and any after `LONG_IDLE_S`."""
        over = len(self._sessions.held) - self.share.each
        if over <= 0 and self.share.waiting and len(self._sessions.held) >= self.share.most:
            over = self.share.waiting  # full: idle sessions make room for waiting ones
        for session_id in self.held:
            session = self._home.sessions.get(session_id)
            if session is None:
                continue
            if busy(session) or session_id in self._admitting or session_id in self._taking:
                self._idle_since.pop(session_id, None)
                continue
            idle = now - self._idle_since.setdefault(session_id, now)
            if (over > 0 and idle >= IDLE_S) or idle >= LONG_IDLE_S:
                over -= await self._let_go(session)

    async def _let_go(self, session: Session) -> int:
        """Give the idle session up (1), unless a message came meanwhile (0): once its
        admission is over, what comes goes to the replica that takes it next."""
        async with session.admission:
            if session.tasks or len(session.queue) or session.running:
                return 0
            self._ready.discard(session.id)
        self._idle_since.pop(session.id, None)
        await self._sessions.release([SESSION + session.id])
        return 1

    def _lost(self, gone: list[Lease], why: str) -> None:
        """Another replica holds these now (this one was paused past their expiry): their
        work here stops at once; its writes would be refused by their fences anyway."""
        self.lost += len(gone)
        for lease in gone:
            session_id = lease.name.removeprefix(SESSION)
            self._ready.discard(session_id)
            self._idle_since.pop(session_id, None)
            session = self._home.sessions.get(session_id)
            if session is None:
                continue
            if session.running is not None:  # a stop waiting for it waits no more
                session.running.finished.set()
            for task in session.tasks:
                task.cancel()
            session.queue = SessionQueue()
            log.warning("session lost to another replica", extra={"session_id": session.id})

    async def held_elsewhere(self, session_id: str) -> bool:
        """Another replica holds the session's lease now."""
        holder = (await self._store.leases.holders([session_id])).get(session_id)
        return holder is not None and holder != self.holder

    async def know_running(self) -> None:
        """The turns running on other replicas now, as `Session.elsewhere` (a replica that
        starts, or takes over as the active one, hears of their starts no more)."""
        running = {r.session_id: r for r in await self._store.runs(status=RunStatus.RUNNING)}
        holders = await self._store.leases.holders(list(running))
        loop = asyncio.get_running_loop()
        for session_id, holder in holders.items():
            session = self._home.sessions.get(session_id)
            if session is not None and holder != self.holder and session.elsewhere is None:
                session.elsewhere = Elsewhere(running[session_id].id, loop.time())

    def wake(self) -> None:
        """Claim at once: work waits that no replica may hold."""
        self._wake.set()

    def _gone(self, gone: list[Lease], why: str) -> None:
        """This replica's own lease ran out (its sessions' with it): taken again at the next
        renewal."""

    async def hold(self, session_id: str) -> bool:
        """This replica runs the session now, taking it if no replica does; False: another
        one runs it."""
        if (taking := self._taking.get(session_id)) is not None:
            await taking
        if self.lease(session_id) is not None:
            return True
        if not self._tasks:  # stopping: nothing more is taken here
            return False
        for lease in await self._sessions.claim([SESSION + session_id]):
            await self._take_up(lease)
        if (taking := self._taking.get(session_id)) is not None:
            await taking
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
                if lease is None:  # let go, lost or not taken up yet: taking it up admits them
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
