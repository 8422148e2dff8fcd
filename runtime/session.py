"""A session's live state: its record, queue, running turn and worker. Small when idle."""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import TypeVar

from runtime.clock import Clock
from runtime.context import ContextUse
from runtime.messages import InboundMessage, QueueMode
from runtime.payloads import FallbackStanding, Progress, ProgressState
from runtime.providers.history import History
from runtime.queue import SessionQueue
from runtime.records import SessionRecord
from runtime.results import SessionState, SessionStatus
from runtime.transcript import Transcript

T = TypeVar("T")


class TurnStopped(Exception):
    """Raised inside a turn when an explicit stop cancelled its in-flight work."""


class HandedBack(Exception):
    """Raised inside a turn at a safe point once its process is stopping (`Runtime.hand_back`):
    the run is left as a crash would leave it, but with nothing cut, for the next start or
    another replica to resume."""


def _abandon(task: asyncio.Future[T]) -> None:
    """Cancel work the turn will not wait for, its end read when it comes: a cancelled gather
    ends with an exception, which unread is reported to the event loop's handler (the terminal
    console's line editor prints it over the chat)."""
    task.cancel()
    task.add_done_callback(lambda done: done.cancelled() or done.exception())


@dataclass(slots=True)
class RunHandle:
    """The running turn as others see it. Stop cancels only the in-flight provider request
    or tool batch, never a store write, so the ledger is never left half-written."""

    run_id: str
    started_at: float  # monotonic
    message_ids: list[str]
    first_message: InboundMessage | None = None  # message_ids[0]'s, as the worker took it
    step: str = "starting"
    resumed: bool = False  # it goes on with messages a run a restart cut off had taken
    stop_requested: bool = False
    stop_claimed: bool = False  # a stop is under way (it records itself, then requests)
    stop_reason: str = ""
    silent_stop: bool = False  # stopped with its parent: no task_result goes back
    inflight: asyncio.Future[object] | None = None
    cut_safely: bool = False  # the in-flight part loses nothing when cut (a model call, a wait)
    handing_back: bool = False  # the process is stopping: end at the next safe point
    handed_back: asyncio.Event = field(default_factory=asyncio.Event)  # set with handing_back
    open_calls: int = 0  # calls of the round under way whose result is not kept yet
    asking: int = 0  # of those, the calls waiting for an operator's approval
    finished: asyncio.Event = field(default_factory=asyncio.Event)
    payer: str | None = None  # who its model calls are charged to (runtime/spend.py)
    held: str | None = None  # why it waits before a model call (a budget); None: it does not
    spend_approved_by: str | None = None  # the operator who let it past its budgets
    spend_wake: asyncio.Event = field(default_factory=asyncio.Event)  # approved, or recheck

    def claim_stop(self) -> bool:
        """True for the first stop of this turn only: a second stop, even one that comes
        while the first is still recording itself, is `already_stopped`."""
        first = not (self.stop_claimed or self.stop_requested)
        self.stop_claimed = True
        return first

    def request_stop(self, reason: str) -> None:
        self.stop_claimed = True
        self.stop_requested = True
        self.stop_reason = reason
        if self.inflight is not None:
            self.inflight.cancel()

    def request_hand_back(self) -> None:
        """The process is stopping: end at the next safe point, the run left to resume. A
        model call or a wait in flight is cut now (nothing of it is recorded yet); tools run
        to their end, so none is cut and answered as interrupted."""
        self.handing_back = True
        self.handed_back.set()
        self.cut_if_safe()

    def cut_if_safe(self) -> None:
        """While handing back: cut what is in flight once cutting it loses nothing (a model
        call, a wait; a round of tools whose every call has its result kept or waits for an
        operator's approval, which stays asked across a restart)."""
        if not self.hands_back or self.inflight is None:
            return
        if self.cut_safely or (self.open_calls and self.open_calls == self.asking):
            self.inflight.cancel()

    def asking_operator(self, waiting: bool) -> None:
        """A call of the round under way began (True) or ended (False) waiting for an
        operator's approval, its request stored: a stop under way need not wait for it."""
        self.asking += 1 if waiting else -1
        self.cut_if_safe()

    def call_kept(self) -> None:
        """A call of the round under way has its result stored."""
        self.open_calls -= 1
        self.cut_if_safe()

    @property
    def hands_back(self) -> bool:
        """Handing back, and no operator's stop under way (a stop wins: it ends the turn)."""
        return self.handing_back and not self.stop_claimed

    def raise_if_handed_back(self) -> None:
        if self.hands_back:
            raise HandedBack

    async def inflight_op(self, work: Awaitable[T], *, cut_safely: bool = False) -> T:
        """Run `work` as the cancellable in-flight part of this turn. `cut_safely`: cutting
        it loses nothing (`request_hand_back` cuts it)."""
        task = asyncio.ensure_future(work)
        if self.stop_requested:
            _abandon(task)
            raise TurnStopped
        if self.hands_back and cut_safely:
            _abandon(task)
            raise HandedBack
        self.inflight = task  # type: ignore[assignment]
        self.cut_safely = cut_safely
        try:
            return await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            # A gather cancelled from outside ends with a CancelledError *exception*, not in
            # the cancelled state, so the stop flag (and not task.cancelled()) decides.
            if not (current and current.cancelling()):
                if self.stop_requested:
                    raise TurnStopped from None
                if self.hands_back:
                    raise HandedBack from None
            raise
        finally:
            self.inflight = None
            self.cut_safely = False

    def progress(self, now: float, state: ProgressState, step: str | None = None) -> Progress:
        """The turn's live state at monotonic time `now`; a new `step` becomes its step."""
        if step is not None:
            self.step = step
        elapsed = round(now - self.started_at, 3)
        return Progress(state=state, step=self.step, elapsed_s=elapsed)

    def approve_spend(self, by: str) -> None:
        """Let this turn past its budgets (/approve-spend); a held turn goes on at once."""
        self.spend_approved_by = by
        self.spend_wake.set()

    async def spend_woken(self, clock: Clock, seconds: float) -> None:
        """Until an approval or a recheck wakes this turn held by a budget, or `seconds`
        pass."""
        woken = asyncio.ensure_future(self.spend_wake.wait())
        slept = asyncio.ensure_future(clock.sleep(seconds))
        try:
            await asyncio.wait({woken, slept}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            woken.cancel()
            slept.cancel()

    def raise_if_stopped(self) -> None:
        if self.stop_requested:
            raise TurnStopped


@dataclass(slots=True)
class Elsewhere:
    """A turn of this session running on another replica, as the ledger tells of it
    (`runtime/homes.py`): what `/status` and `/stop` see of it here."""

    run_id: str
    started_at: float  # monotonic, here: when its start was heard of
    step: str = "starting"
    held: str | None = None  # why a budget holds it, as `RunHandle.held`
    ended: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass(slots=True)
class Session:
    record: SessionRecord
    default_mode: QueueMode
    queue: SessionQueue = field(default_factory=SessionQueue)
    running: RunHandle | None = None
    worker: asyncio.Task[None] | None = None
    compaction: asyncio.Task[None] | None = None  # /compact between turns, under way
    leaving: asyncio.Task[None] | None = None  # /new: the memory flush of the session left
    last_arrival: float = 0.0
    context: ContextUse = field(default_factory=ContextUse)
    compact_requested: bool = False  # by the operator: compact before the next request
    # Held by a running turn, and by a compaction between turns: never both at once.
    turn_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    # Held by `Runtime.submit` from its decision to its effect: the queue it decided on is the
    # queue it changes, and messages join the queue in the order they were stored.
    admission: asyncio.Lock = field(default_factory=asyncio.Lock)
    elsewhere: Elsewhere | None = None  # its turn running on another replica
    standing: FallbackStanding | None = None  # off its first provider, as heard from there
    # Its transcript as the last turn read it: the next turn's read parses only what is new.
    history: Transcript | None = None
    prepared: History = field(default_factory=History)  # its rows as last sent: see History
    _arrival: asyncio.Event | None = None

    @property
    def id(self) -> str:
        return self.record.id

    @property
    def tasks(self) -> list[asyncio.Task[None]]:
        """Its work under way: the worker, a compaction between turns, a flush on leaving."""
        return [t for t in (self.worker, self.compaction, self.leaving) if t is not None]

    @property
    def mode(self) -> QueueMode:
        return self.record.queue_mode or self.default_mode

    def signal_interjection(self) -> None:
        if self._arrival is not None:
            self._arrival.set()

    def interjection_signal(self) -> asyncio.Event:
        """An event set when an operator message that may interject arrives."""
        if self._arrival is None:
            self._arrival = asyncio.Event()
        self._arrival.clear()
        return self._arrival

    def status(self, now: float, children: tuple[str, ...], window: int) -> SessionStatus:
        """What `Runtime.status` answers of this session at monotonic time `now`."""
        run: RunHandle | Elsewhere | None = self.running or self.elsewhere
        return SessionStatus(
            session_id=self.id,
            agent_id=self.record.agent_id,
            profile=self.record.profile,
            mode=self.mode,
            state=SessionState.RUNNING if run else SessionState.IDLE,
            run_id=run.run_id if run else None,
            step=run.step if run else None,
            elapsed_s=round(now - run.started_at, 3) if run else None,
            queued=len(self.queue),
            children=children,
            context_tokens=self.context.last_request_tokens,
            context_window=window,
        )


WARM_SESSIONS = 256  # sessions whose history is kept between turns


class WarmSessions:
    """The sessions whose history is kept between turns (`Session.history`, `.prepared`):
    the `size` that began a turn last. An older one's is let go, so memory stays bounded
    however many sessions a process holds; its next turn reads and prepares it whole, once."""

    def __init__(self, sessions: dict[str, Session], size: int = WARM_SESSIONS) -> None:
        self.sessions = sessions
        self.size = size
        self._order: OrderedDict[str, None] = OrderedDict()

    def began(self, session: Session) -> None:
        self._order[session.id] = None
        self._order.move_to_end(session.id)
        while len(self._order) > self.size:
            cold = self.sessions.get(self._order.popitem(last=False)[0])
            if cold is not None:
                cold.history, cold.prepared = None, History()
