"""notify_operator: who a notification is for, and how it is recorded (DESIGN §2)."""

from __future__ import annotations

import uuid

from runtime.events import Event
from runtime.host import Host
from runtime.payloads import NotificationRequested
from runtime.records import AgentProfile, NotificationRecord, OperatorBoundary
from runtime.session import Session
from runtime.store.store import Store
from runtime.tools.envelope import ToolResult

SUMMARY_LIMIT = 160


def summarize(message: str) -> str:
    """The first non-empty line, trimmed, at most 160 characters."""
    first = next((line.strip() for line in message.splitlines() if line.strip()), "")
    return first[:SUMMARY_LIMIT]


def build_notification(
    session: Session, parent: Session | None, run_id: str | None, message: str, now: float
) -> NotificationRecord:
    """A private child's notification belongs to its parent and goes through its routes."""
    if session.record.profile is AgentProfile.PRIVATE_CHILD and parent is not None:
        agent_id, route_session = parent.record.agent_id, parent.id
        boundary = OperatorBoundary.PARENT_SUPERVISOR
    else:
        agent_id, route_session = session.record.agent_id, session.id
        boundary = OperatorBoundary.PRIMARY_OPERATOR
    return NotificationRecord(
        notification_id=f"ntf_{uuid.uuid4().hex}",
        agent_id=agent_id,
        requested_by_agent_id=session.record.agent_id,
        session_id=route_session,
        requested_by_session_id=session.id,
        run_id=run_id,
        target_operator_boundary=boundary,
        message=message,
        summary=summarize(message),
        created_at=now,
    )


async def notify_operator(
    store: Store, session: Session, parent: Session | None, run_id: str | None, message: str
) -> ToolResult:
    """Record the notification and its event in one transaction. Not terminal: no waiting."""
    if not message.strip():
        return ToolResult.failure("invalid_input", "notify_operator needs a non-empty message")
    record = build_notification(session, parent, run_id, message, store.clock.wall())
    async with store.write() as w:
        w.insert_notification(record)
        w.emit(Event(NotificationRequested.of(record), record.session_id, run_id))
    return ToolResult.success(
        f"operator notified: {record.summary}", {"notification_id": record.notification_id}
    )


async def notify_for_turn(host: Host, session: Session, run_id: str, message: str) -> ToolResult:
    """notify_operator for a turn; a private child's goes through its parent."""
    parent_id = session.record.parent_session_id
    parent = host.sessions.get(parent_id) if parent_id else None
    return await notify_operator(host.store, session, parent, run_id, message)
