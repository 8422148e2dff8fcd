"""A message admitted to its session (`Runtime.submit`): the scheduler's decision, what it
writes (the message, the decision and what it drops, in one transaction with the caller's
records) and its effect on the session's queue, decided and applied as one step."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from runtime.clock import Clock
from runtime.events import Event
from runtime.ids import new_id
from runtime.messages import InboundMessage, QueueEntry, QueueStatus, may_interject
from runtime.payloads import MessageArrived, MessageDropped, MessageQueued, Progress
from runtime.results import RuntimeSettings, SubmitResult
from runtime.scheduler import Decision, DecisionKind, SessionView, SubmitStatus, decide
from runtime.session import Session
from runtime.store.store import Store
from runtime.store.writer import Writer


@dataclass(frozen=True, slots=True)
class Admitting:
    """What admission needs of the runtime: its store, clock and settings, and how to wake
    a session's worker."""

    store: Store
    clock: Clock
    settings: RuntimeSettings
    ensure_worker: Callable[[Session], None]


async def admit(
    rt: Admitting,
    session: Session,
    message: InboundMessage,
    also: Callable[[Writer, str], None] | None,
    files: Mapping[str, bytes] | None,
) -> SubmitResult:
    """Decide, store, then apply, under the session's admission lock (the caller holds it).
    The worker does not take that lock, so what the decision takes from the queue (the
    oldest entry, when it is full) is taken before the store write: a turn can no longer
    start it meanwhile."""
    message_id = new_id("msg")
    _check_files(message, files)

    def store(w: Writer, decision: Decision) -> int:
        refused = decision.kind is DecisionKind.DROP_NEW
        status = QueueStatus.DROPPED if refused else QueueStatus.QUEUED
        return _insert(w, session.id, message_id, message, status, also, files)

    return await _admitted(rt, session, message_id, message, store)


async def store_arrival(
    store: Store,
    session_id: str,
    message: InboundMessage,
    also: Callable[[Writer, str], None] | None,
    files: Mapping[str, bytes] | None,
) -> SubmitResult:
    """A message for a session another replica runs, or none does yet: stored as it came
    (`ARRIVED`, with its files and the caller's records), for the replica holding the
    session to admit (`runtime/homes.py`; the hint wakes it at once)."""
    message_id = new_id("msg")
    _check_files(message, files)
    async with store.write() as w:
        _insert(w, session_id, message_id, message, QueueStatus.ARRIVED, also, files)
        w.emit(Event(MessageArrived(message_id=message_id), session_id))
    return SubmitResult(message_id, SubmitStatus.QUEUED, ())


def _check_files(message: InboundMessage, files: Mapping[str, bytes] | None) -> None:
    missing = [a.id for a in message.attachments if a.id not in (files or {})]
    if missing:
        raise ValueError(f"no bytes given for the attachments {', '.join(missing)}")


def _insert(
    w: Writer,
    session_id: str,
    message_id: str,
    message: InboundMessage,
    status: QueueStatus,
    also: Callable[[Writer, str], None] | None,
    files: Mapping[str, bytes] | None,
) -> int:
    """The message's row, the bytes of its files and the caller's records: its number."""
    seq = w.insert_message(message_id, session_id, message, status)
    for attachment in message.attachments:
        w.store_file(attachment.id, message_id, (files or {})[attachment.id])
    if also is not None:
        also(w, message_id)
    return seq


async def admit_arrived(rt: Admitting, session: Session, arrived: QueueEntry) -> SubmitResult:
    """A message stored while another replica ran the session, or none did
    (`QueueStatus.ARRIVED`, `runtime/homes.py`): decided and applied here as `admit` does,
    its row and files stored already. The caller holds the admission lock."""

    def store(w: Writer, decision: Decision) -> int:
        refused = decision.kind is DecisionKind.DROP_NEW
        status = QueueStatus.DROPPED if refused else QueueStatus.QUEUED
        w.set_message_status([arrived.id], status)
        return arrived.seq

    return await _admitted(rt, session, arrived.id, arrived.message, store)


async def _admitted(
    rt: Admitting,
    session: Session,
    message_id: str,
    message: InboundMessage,
    store: Callable[[Writer, Decision], int],
) -> SubmitResult:
    """The decision on `message`, stored (`store` writes the message's row) and applied."""
    settings = rt.settings
    view = SessionView(
        session.mode,
        session.running is not None,
        len(session.queue),
        settings.queue_cap,
        settings.drop_policy,
    )
    decision = decide(view, message)
    running = session.running  # the turn an interrupt is meant for
    dropped = session.queue.take_oldest() if decision.drop_oldest else None
    try:
        async with rt.store.write() as w:
            seq = store(w, decision)
            record_admission(w, session, message_id, message, decision, dropped, settings.queue_cap)
    except BaseException:
        if dropped is not None:  # not dropped after all: back where it was
            session.queue.push_front([dropped])
            rt.ensure_worker(session)
        raise
    if decision.kind is DecisionKind.DROP_NEW:
        return SubmitResult(message_id, SubmitStatus.DROPPED, (message_id,))
    entry = QueueEntry(message_id, session.id, seq, message, QueueStatus.QUEUED, rt.clock.wall())
    session.queue.push(entry)
    session.last_arrival = rt.clock.monotonic()
    if may_interject(message):
        session.signal_interjection()
    if decision.kind is DecisionKind.INTERRUPT_RUNNING_TURN and running is not None:
        running.request_stop("interrupted by a new operator message")
    rt.ensure_worker(session)
    return SubmitResult(message_id, decision.submit_status, (dropped.id,) if dropped else ())


def record_admission(
    w: Writer,
    session: Session,
    message_id: str,
    message: InboundMessage,
    decision: Decision,
    dropped: QueueEntry | None,
    queue_cap: int,
) -> None:
    """The decision on a stored message, in its transaction: its events, and the oldest
    message it drops."""
    refused = decision.kind is DecisionKind.DROP_NEW
    w.emit(
        Event(
            MessageQueued(
                message_id=message_id,
                kind=message.kind,
                origin=message.origin,
                trust=message.trust,
                authority_class=message.authority_class,
                priority=message.priority,
                decision=decision.kind,
                reason=decision.reason,
                status=decision.submit_status,
                sender=message.provenance.sender,
            ),
            session.id,
        )
    )
    if refused:
        w.emit(drop_event(session.id, message_id, message, decision.reason))
    elif session.running is None and session.worker is None:
        # An idle session now has work: it is queued for a turn.
        w.emit(Event(Progress.queued(), session.id))
    if dropped is not None:
        w.set_message_status([dropped.id], QueueStatus.DROPPED)
        reason = f"queue full ({queue_cap}); oldest dropped"
        w.emit(drop_event(session.id, dropped.id, dropped.message, reason))


def drop_event(session_id: str, message_id: str, message: InboundMessage, reason: str) -> Event:
    return Event(
        MessageDropped(
            message_id=message_id,
            reason=reason,
            sender=message.provenance.sender,
            reply_route=message.provenance.reply_route,
            text=message.text[:200],
        ),
        session_id,
    )
