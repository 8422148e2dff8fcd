"""A session's ledger events as the console's audit list: one line each, saying what the
admin needs to know (a drain's boundary, a drop's reason, a stop, a notification's target
boundary and route, who did what from the console)."""

from __future__ import annotations

from collections.abc import Mapping

from bridge.admin.records import AuditEntry
from bridge.events import AdminAction
from bridge.store import NotificationRoute
from runtime.events import Event
from runtime.payloads import (
    ChildSpawned,
    ContextCompacted,
    InterjectionAdmitted,
    InterjectionDrainFailed,
    MessageDropped,
    MessageQueued,
    NotificationRequested,
    ProviderRequestRefused,
    ProviderRetry,
    QueueModeChanged,
    RunRecovered,
    SessionCreated,
    ToolFinished,
    ToolStarted,
    TurnFinished,
    TurnStarted,
)


def entry(event: Event, routes: Mapping[str, NotificationRoute]) -> AuditEntry:
    return AuditEntry(event.seq, event.at, event.type, event.run_id, _summary(event, routes))


def _summary(event: Event, routes: Mapping[str, NotificationRoute]) -> str:
    match event.data:
        case InterjectionAdmitted(boundary=boundary, sender=sender, message_id=message_id):
            return f"operator message {message_id} from {sender} drained at {boundary}"
        case InterjectionDrainFailed(boundary=boundary, error=error):
            return f"drain at {boundary} failed ({error}); the messages went back to the queue"
        case MessageDropped(reason=reason, sender=sender, message_id=message_id):
            return f"message {message_id} from {sender} dropped: {reason}"
        case MessageQueued(sender=sender, decision=decision, kind=kind):
            return f"{kind} from {sender} queued: {decision}"
        case TurnStarted(message_ids=ids, mode=mode, resumed=resumed):
            again = " (resumed)" if resumed else ""
            return f"turn started{again} with {len(ids)} message(s), queue mode {mode}"
        case TurnFinished(outcome=outcome, error=error, duration_s=duration):
            why = f": {error}" if error else ""
            return f"turn {outcome} after {duration:.1f}s{why}"
        case NotificationRequested() as n:
            return _notification(n, routes.get(n.notification_id))
        case ToolStarted(name=name):
            return f"tool {name} started"
        case ToolFinished(name=name, status=status, summary=summary):
            return f"tool {name} {status}: {summary}"
        case QueueModeChanged(mode=mode):
            return f"queue mode set to {mode or 'the default'}"
        case SessionCreated(agent_id=agent, profile=profile):
            return f"session created for {agent} ({profile})"
        case ChildSpawned(child_agent_id=child):
            return f"child agent {child} spawned"
        case ContextCompacted(rows=rows, fallback=fallback):
            how = "left out (the summary failed)" if fallback else "summarized"
            return f"{rows} earlier transcript rows {how}"
        case ProviderRetry(attempt=attempt, error=error):
            return f"model request retried (attempt {attempt}): {error}"
        case ProviderRequestRefused(problems=problems):
            return "model request refused before sending: " + "; ".join(problems)
        case RunRecovered(status=status):
            return f"run recovered after a restart as {status}"
        case AdminAction(admin=admin, action=action, detail=detail):
            return f"{admin}: {action} ({detail})"
    return event.type


def _notification(n: NotificationRequested, route: NotificationRoute | None) -> str:
    head = f"notification {n.notification_id} to the {n.target_operator_boundary}"
    if n.requested_by_agent_id != n.agent_id:
        head += f" (raised by {n.requested_by_agent_id})"
    if route is None:
        return f"{head}: not routed yet \u2014 {n.summary}"
    if route.route is None:
        return f"{head}: no route ({route.routing}) \u2014 {n.summary}"
    where = route.route.conversation_key
    return f"{head} via {where}, delivery {route.delivery_status} \u2014 {n.summary}"
