"""What `Runtime.submit` writes: the message, the scheduler's decision about it, and what
that decision drops, in the caller's transaction (so it all commits at once or not at all)."""

from __future__ import annotations

from collections.abc import Mapping

from runtime.events import Event
from runtime.messages import InboundMessage, QueueEntry, QueueStatus
from runtime.payloads import MessageDropped, MessageQueued, Progress
from runtime.scheduler import Decision, DecisionKind
from runtime.session import Session
from runtime.store import Writer


def record_admission(
    w: Writer,
    session: Session,
    message_id: str,
    message: InboundMessage,
    decision: Decision,
    dropped: QueueEntry | None,
    queue_cap: int,
    files: Mapping[str, bytes] | None = None,
) -> int:
    """Store the message as the decision has it, with the bytes of its attachments (`files`,
    by id); returns its queue sequence number."""
    missing = [a.id for a in message.attachments if a.id not in (files or {})]
    if missing:
        raise ValueError(f"no bytes given for the attachments {', '.join(missing)}")
    refused = decision.kind is DecisionKind.DROP_NEW
    status = QueueStatus.DROPPED if refused else QueueStatus.QUEUED
    seq = w.insert_message(message_id, session.id, message, status)
    for attachment in message.attachments:
        w.store_file(attachment.id, message_id, (files or {})[attachment.id])
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
    return seq


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
