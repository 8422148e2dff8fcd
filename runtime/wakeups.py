"""Wake-ups: `schedule_wakeup` ends an agent's turn and asks for another one later, instead of
holding the turn open as `sleep` does.

Each wake-up is a durable record. The alarm fires the earliest due one as a timer message
into its session, and marks it fired in the very transaction that stores the message: a
crash before it leaves it pending (it fires after the restart, late, and says how late), a
crash after it leaves the message queued (the turn resumes). Only the process that runs the
turns runs the alarm (a standby loads the pending wake-ups when it takes over).

A model cannot wake itself without end (issue 38): a session has at most one wake-up pending
(a later one replaces it, and the model is told which), none sooner than the workspace's
floor, and no more than its cap in any 24 hours; `/stop` and `/new` cancel what a session has
pending, and drop the wake-up messages it has queued. The note comes back framed as data,
never as Switchboard's own words (`prompts.frame_wakeup_note`)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from config.timing import parse_duration
from runtime.agents import AgentSpec, WakeupLimits
from runtime.clock import Clock
from runtime.errors import ConditionFailedError, UnknownSessionError
from runtime.events import Event
from runtime.ids import new_id
from runtime.messages import (
    InboundMessage,
    MessageKind,
    Origin,
    Priority,
    Provenance,
    QueueEntry,
    QueueStatus,
    Trust,
)
from runtime.payloads import WakeupCancelled, WakeupFired, WakeupScheduled
from runtime.prompts import WAKEUP_HEADER, frame_wakeup_note
from runtime.records import WakeupRecord, WakeupStatus
from runtime.session import Session
from runtime.store import wakeups as stored
from runtime.store.store import Store
from runtime.store.writer import Writer
from runtime.tasks import cancel_and_wait
from runtime.tools.envelope import ToolResult

log = logging.getLogger(__name__)

RETRY_S = 5.0  # a fire that failed (the store down) is tried again after this
MAX_NAP_S = 60.0  # the alarm looks at the wall clock at least this often (it may jump)
MAX_AHEAD_S = 366 * 86_400.0
DAY_S = 86_400.0  # the cap counts the wake-ups a session asked for in any 24 hours
SURFACE = "wakeup"  # a wake-up message's delivery surface: how /stop and /new find it

Submit = Callable[[str, InboundMessage, Callable[[Writer, str], None]], Awaitable[Any]]


def due_time(when: str, now: float) -> float:
    """The wall time `when` names: a delay ("90s", "2h", "1d") or an ISO 8601 time (UTC when
    it has no offset). Raises ValueError saying what to write instead."""
    text = when.strip()
    try:
        due = now + parse_duration(text)
    except ValueError:
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            raise ValueError(
                f"when = {when!r} is neither a delay (90s, 15m, 2h, 1d) nor an ISO 8601 time "
                "(2026-12-01T09:00:00+01:00)"
            ) from None
        due = (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()
    if due - now < 1:
        raise ValueError(f"when = {when!r} is not in the future; for a short wait use sleep")
    if due - now > MAX_AHEAD_S:
        raise ValueError(f"when = {when!r} is more than a year ahead")
    return due


def when_text(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def delay_text(seconds: float) -> str:
    """A floor as the config writes it: "10s", "2m", "1h30m"."""
    whole = round(seconds)
    parts = [(whole // 3600, "h"), (whole % 3600 // 60, "m"), (whole % 60, "s")]
    return "".join(f"{n}{unit}" for n, unit in parts if n) or f"{seconds:g}s"


def limits_of(agents: Mapping[str, AgentSpec], session: Session) -> WakeupLimits:
    """The limits of the session's agent as configured now (the defaults once it is gone)."""
    agent = agents.get(session.record.agent_id)
    return agent.wakeups if agent is not None else WakeupLimits()


def is_wakeup(message: InboundMessage) -> bool:
    return message.origin is Origin.TIMER and message.delivery_surface == SURFACE


def wake_message(wakeup: WakeupRecord, now: float, payer: str | None = None) -> InboundMessage:
    """The prompt of the turn a wake-up starts: when it was asked for and for when, how late
    it comes (a restart in between), and the agent's own note, framed as data. The note is
    the model's words, which may carry what it read then: the message is untrusted."""
    late = now - wakeup.due_at
    lateness = f"; it comes {late:.0f}s late (Switchboard was not running)" if late > 60 else ""
    header = (
        f"{WAKEUP_HEADER} at {when_text(wakeup.created_at)} for {when_text(wakeup.due_at)}"
        f"{lateness}]"
    )
    return InboundMessage(
        text=frame_wakeup_note(header, wakeup.note),
        kind=MessageKind.TIMER_TICK,
        origin=Origin.TIMER,
        trust=Trust.UNTRUSTED_EXTERNAL,
        priority=Priority.NORMAL,
        delivery_surface=SURFACE,
        provenance=Provenance(
            sender="wake-up",
            surface=SURFACE,
            reply_route=wakeup.reply_route,
            correlation_id=wakeup.id,
            charged_to=payer,
        ),
    )


class Alarm:
    def __init__(self, store: Store, clock: Clock, submit: Submit) -> None:
        self._store = store
        self._clock = clock
        self._submit = submit
        self._pending: dict[str, WakeupRecord] = {}
        self._changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        # What a wake-up is decided on (a session's pending one, its count) and the write
        # that applies it, one at a time: setting, firing and cancelling all take it.
        self._deciding = asyncio.Lock()
        self._retired: set[str] = set()  # sessions started afresh (/new): none set from now on

    def pending(self, session_ids: set[str] | None = None) -> list[WakeupRecord]:
        """Wake-ups not fired yet, soonest first (of `session_ids` only, when given)."""
        found = [
            w for w in self._pending.values() if session_ids is None or w.session_id in session_ids
        ]
        return sorted(found, key=lambda w: (w.due_at, w.id))

    async def start(self) -> None:
        """Load what is pending (what a crash or another replica left too) and keep time."""
        for wakeup in await self._store.wakeups.pending():
            self._pending[wakeup.id] = wakeup
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="wakeups")

    async def stop(self) -> None:
        if self._task is not None:
            await cancel_and_wait(self._task)
            self._task = None

    async def heard(self, event: Event) -> None:
        """A wake-up set, fired or cancelled on any replica (a turn runs where its session's
        lease is): while this alarm keeps time, what is pending follows it."""
        if self._task is None:
            return
        match event.data:
            case WakeupScheduled(wakeup_id=wakeup_id) if wakeup_id not in self._pending:
                wakeup = await self._store.wakeups.get(wakeup_id)
                if wakeup is not None and wakeup.status is WakeupStatus.PENDING:
                    self._pending[wakeup_id] = wakeup
                    self._changed.set()
            case WakeupCancelled(wakeup_id=wakeup_id) | WakeupFired(wakeup_id=wakeup_id):
                if self._pending.pop(wakeup_id, None) is not None:
                    self._changed.set()

    async def schedule(
        self,
        session_id: str,
        run_id: str | None,
        due_at: float,
        note: str,
        reply_route: dict[str, Any] | None,
    ) -> tuple[WakeupRecord, list[WakeupRecord]]:
        """Set a wake-up for the session, replacing the one it has pending: (the new one, the
        ones it replaced). Call under `_deciding`."""
        replaced = await self._store.wakeups.pending_of(session_id)
        wakeup = WakeupRecord(
            id=new_id("wak"),
            session_id=session_id,
            run_id=run_id,
            due_at=due_at,
            note=note,
            status=WakeupStatus.PENDING,
            created_at=self._clock.wall(),
            reply_route=reply_route,
        )
        async with self._store.write() as w:
            for old in replaced:
                by = f"switchboard: replaced by {wakeup.id}"
                stored.cancelled(w, old.id, by)
                w.emit(Event(WakeupCancelled(wakeup_id=old.id, by=by), session_id, run_id))
            stored.insert(w, wakeup)
            w.emit(
                Event(
                    WakeupScheduled(wakeup_id=wakeup.id, due_at=due_at, note=note),
                    session_id,
                    run_id,
                )
            )
        for old in replaced:
            self._pending.pop(old.id, None)
        self._pending[wakeup.id] = wakeup
        self._changed.set()
        return wakeup, replaced

    async def wake_later(
        self, session_id: str, run_id: str, when: str, note: str, limits: WakeupLimits
    ) -> ToolResult:
        """schedule_wakeup for a turn: the result that ends it, or an error the model reads
        (too soon, past the day's cap, a conversation started afresh). The wake-up's answer
        goes where this turn's went."""
        now = self._clock.wall()
        try:
            due = due_time(when, now)
        except ValueError as exc:
            return ToolResult.failure("invalid_input", str(exc))
        if due - now < limits.min_delay_s:
            floor = delay_text(limits.min_delay_s)
            return ToolResult.failure(
                "too_soon",
                f"when = {when!r} is sooner than the floor for wake-ups here, {floor}: ask for "
                f"{floor} or later (for a short wait in this turn, use sleep)",
            )
        first = await self._store.first_message_of_run(run_id)
        route = first.message.provenance.reply_route if first else None
        async with self._deciding:
            if session_id in self._retired:
                return ToolResult.failure(
                    "session_closed",
                    "the operator started this conversation afresh (/new): this session sets "
                    "no more wake-ups",
                )
            since = self._clock.wall() - DAY_S
            asked = await self._store.wakeups.asked_since(session_id, since, limits.per_day)
            if len(asked) >= limits.per_day:
                return ToolResult.failure(
                    "limit_reached",
                    f"this session has set {limits.per_day} wake-ups in the last 24 hours, the "
                    f"most it may; the next may be set from {when_text(asked[-1] + DAY_S)}. "
                    "Finish what you can in this turn.",
                )
            wakeup, replaced = await self.schedule(session_id, run_id, due, note, route)
        said = f"wake-up set for {when_text(due)}; this turn ends now"
        if replaced:
            earlier = ", ".join(when_text(w.due_at) for w in replaced)
            said = f"{said}. It replaced the wake-up set for {earlier} (one may be pending)"
        result = ToolResult.success(
            said,
            {
                "wakeup_id": wakeup.id,
                "due_at": when_text(due),
                "replaced": [{"wakeup_id": w.id, "due_at": when_text(w.due_at)} for w in replaced],
            },
        )
        return result.model_copy(update={"ends_turn": True})

    async def cancel(self, wakeup_id: str, by: str) -> WakeupRecord | None:
        """Cancel a pending wake-up; None when there is none by that id (fired, cancelled or
        never made)."""
        async with self._deciding:
            wakeup = self._pending.get(wakeup_id)
            if wakeup is None:
                return None
            async with self._store.write() as w:
                stored.cancelled(w, wakeup_id, by)
                w.emit(Event(WakeupCancelled(wakeup_id=wakeup_id, by=by), wakeup.session_id))
            self._pending.pop(wakeup_id, None)
        self._changed.set()
        return wakeup

    async def cancel_session(self, session: Session, by: str, *, retire: bool = False) -> int:
        """Cancel the session's pending wake-ups and drop the wake-up messages it has queued
        (fired, not started yet): how many (`/stop`; `/new` with `retire`, after which the
        session sets no more)."""
        async with self._deciding, session.admission:  # none admitted meanwhile
            if retire:
                self._retired.add(session.id)
            pending = await self._store.wakeups.pending_of(session.id)
            # fired for a replica running the session, not admitted there yet (replicas)
            stored_only = await self._store.messages(
                session_id=session.id, statuses=[QueueStatus.ARRIVED]
            )
            arrived = [e for e in stored_only if is_wakeup(e.message)]
            # taken from the queue with no await between the choice and the taking: a turn
            # cannot start one of them meanwhile (put back if the write fails)
            queued = [e for e in session.queue if is_wakeup(e.message)]
            for entry in queued:
                session.queue.remove(entry)
            try:
                async with self._store.write() as w:
                    for wakeup in pending:
                        stored.cancelled(w, wakeup.id, by)
                        w.emit(Event(WakeupCancelled(wakeup_id=wakeup.id, by=by), session.id))
                    self._drop(w, session.id, [*arrived, *queued], by)
            except BaseException:
                session.queue.push_front(queued)
                raise
            for wakeup in pending:
                self._pending.pop(wakeup.id, None)
        self._changed.set()
        count = len(pending) + len(arrived) + len(queued)
        if count:
            log.info(
                "wake-ups cancelled", extra={"session_id": session.id, "count": count, "by": by}
            )
        return count

    @staticmethod
    def _drop(w: Writer, session_id: str, queued: list[QueueEntry], by: str) -> None:
        w.set_message_status([e.id for e in queued], QueueStatus.DROPPED)
        for entry in queued:
            wakeup_id = entry.message.provenance.correlation_id or entry.id
            w.emit(Event(WakeupCancelled(wakeup_id=wakeup_id, by=by), session_id))

    async def _run(self) -> None:
        while True:
            self._changed.clear()
            due = self.pending()[:1]
            if not due:
                await self._changed.wait()
                continue
            delay = due[0].due_at - self._clock.wall()
            if delay > 0:
                await self._nap(min(delay, MAX_NAP_S))
                continue
            if not await self._fire(due[0]):
                await self._nap(RETRY_S)

    async def _nap(self, seconds: float) -> None:
        """Until `seconds` pass or the wake-ups change (one added or cancelled)."""
        changed = asyncio.ensure_future(self._changed.wait())
        slept = asyncio.ensure_future(self._clock.sleep(seconds))
        try:
            await asyncio.wait((changed, slept), return_when=asyncio.FIRST_COMPLETED)
        finally:
            changed.cancel()
            slept.cancel()

    async def _fire(self, wakeup: WakeupRecord) -> bool:
        async with self._deciding:
            if wakeup.id not in self._pending:
                return True  # replaced or cancelled since it was picked
            return await self._fire_now(wakeup)

    async def _fire_now(self, wakeup: WakeupRecord) -> bool:
        now = self._clock.wall()
        asker = await self._store.run(wakeup.run_id) if wakeup.run_id else None
        message = wake_message(wakeup, now, asker.payer if asker else None)

        def mark(w: Writer, message_id: str) -> None:
            stored.fired(w, wakeup.id, message_id)
            fired = WakeupFired(
                wakeup_id=wakeup.id, message_id=message_id, late_s=now - wakeup.due_at
            )
            w.emit(Event(fired, wakeup.session_id))

        try:
            await self._submit(wakeup.session_id, message, mark)
        except ConditionFailedError:  # cancelled meanwhile, by a replica running its session
            self._pending.pop(wakeup.id, None)
            return True
        except UnknownSessionError:
            log.warning(
                "wake-up of a session that is gone, cancelled", extra={"wakeup_id": wakeup.id}
            )
            async with self._store.write() as w:
                by = "switchboard: its session is gone"
                stored.cancelled(w, wakeup.id, by)
                w.emit(Event(WakeupCancelled(wakeup_id=wakeup.id, by=by), wakeup.session_id))
            self._pending.pop(wakeup.id, None)
            return True
        except Exception:
            log.exception("wake-up could not fire; trying again", extra={"wakeup_id": wakeup.id})
            return False
        self._pending.pop(wakeup.id, None)
        log.info(
            "wake-up fired",
            extra={
                "wakeup_id": wakeup.id,
                "session_id": wakeup.session_id,
                "late_s": round(now - wakeup.due_at, 3),
            },
        )
        return True
