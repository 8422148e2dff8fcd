"""A session's ledger events as the console's audit list: one line each, in words, saying who
did what ("operator alice sent a message: it starts a turn", "tool shell ran 1.2 s, ok",
"admin acme/lead stopped the turn"), with what the admin needs to know (a drain's boundary,
a drop's reason, a notification's target and route)."""

from __future__ import annotations

from collections.abc import Mapping

from bridge import texts
from bridge.admin.records import AuditEntry
from bridge.admin.words import CONFIG_ADMIN, by_admin, chars, short_input, took
from bridge.approvals import masked
from bridge.events import AdminAction, AdminActionKind, InboundTruncated, OutputUnroutable
from bridge.events import NotificationUnroutable as Unroutable
from bridge.places import place
from bridge.store.records import AdminActionRecord, NotificationRoute
from bridge.types import DeliveryStatus
from runtime.events import Event
from runtime.messages import MessageKind, Origin
from runtime.payloads import (
    ApprovalDecided,
    ApprovalRequested,
    AssistantText,
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
from runtime.providers.base import FALLING_BACK
from runtime.records import ApprovalStatus, RunStatus, ToolCallRecord
from runtime.scheduler import DecisionKind
from runtime.tools.envelope import ToolStatus

_DECISIONS = {
    DecisionKind.START_TURN: "it starts a turn",
    DecisionKind.WAIT_FOR_SAFE_POINT: "the running turn takes it in at its next safe point",
    DecisionKind.QUEUE_FOR_NEXT_TURN: "it waits for the next turn",
    DecisionKind.INTERRUPT_RUNNING_TURN: "it interrupts the running turn",
    DecisionKind.DROP_NEW: "it is dropped",
}
ARROW = " \u2192 "
_ADMIN_ACTIONS = {
    AdminActionKind.STOP_TURN: "stopped the turn",
    AdminActionKind.SET_QUEUE_MODE: "changed the queue mode",
    AdminActionKind.RETRY_DELIVERY: "sent a failed delivery again",
    AdminActionKind.DISCARD_DELIVERY: "discarded a failed delivery",
    AdminActionKind.REROUTE_NOTIFICATION: "sent a notification",
    AdminActionKind.EDIT_CONFIG: "changed the workspace's settings",
    AdminActionKind.RELOAD_CONFIG: "reloaded the config file",
    AdminActionKind.PAUSE_SCHEDULE: "paused a schedule",
    AdminActionKind.RESUME_SCHEDULE: "resumed a schedule",
    AdminActionKind.RUN_SCHEDULE: "ran a schedule now",
    AdminActionKind.CANCEL_WAKEUP: "cancelled a wake-up",
    AdminActionKind.APPROVE_SPEND: "approved the spend of the held turn",
    AdminActionKind.FORGET_MEMORY: "had the agent forget a memory",
}
# An action on a delivery: its target is the delivery's id, no one's word; its detail says
# which delivery it was ("the answer to Telegram, DM with Alice"), and is said instead.
_ON_DELIVERY = (AdminActionKind.RETRY_DELIVERY, AdminActionKind.DISCARD_DELIVERY)
# A config change: its detail says what changed ("schedule tick changed (every): every 2s"),
# its target (the workspace, or the schedule the detail names) would only repeat it.
_SAID_BY_DETAIL = (*_ON_DELIVERY, AdminActionKind.EDIT_CONFIG, AdminActionKind.RELOAD_CONFIG)
# What a message other than an operator's is, in the audit's words.
_KINDS = {
    MessageKind.TASK_REQUEST: "a task",
    MessageKind.TASK_RESULT: "its report",
    MessageKind.TIMER_TICK: "a scheduled run",
    MessageKind.CHANNEL_EVENT: "an event",
    MessageKind.CONTROL: "a control message",
}
_DELIVERY = {
    DeliveryStatus.PENDING: "not sent yet",
    DeliveryStatus.SENDING: "being sent",
    DeliveryStatus.ACCEPTED_BY_TRANSPORT: "delivered",
    DeliveryStatus.FAILED: "its delivery failed",
}


def admin_action_words(action: AdminActionKind) -> str:
    """What an admin did, in words ("ran a schedule now"), for every list of their actions."""
    return _ADMIN_ACTIONS.get(action, action.replace("_", " "))


def admin_action_line(a: AdminActionRecord) -> str:
    """An admin's action on the workspace's list of them: who did what to what ("acme/lead
    paused a schedule: tick (every 2s, agent assistant)", "the admin sent a failed delivery
    again: the answer to Telegram, DM with Alice; last error: ...")."""
    who = "the admin" if a.admin == CONFIG_ADMIN else a.admin
    did = admin_action_words(a.action)
    if a.action in _SAID_BY_DETAIL and a.detail:
        return f"{who} {did}: {a.detail}"
    return f"{who} {did}: {a.target}" + (f" ({a.detail})" if a.detail else "")


def entry(
    event: Event,
    routes: Mapping[str, NotificationRoute],
    calls: Mapping[str, ToolCallRecord],
) -> AuditEntry:
    """`routes`: the notifications' routes by id; `calls`: the tool calls by tool_use id
    (for how long each ran)."""
    return AuditEntry(event.seq, event.at, event.type, event.run_id, _said(event, routes, calls))


def _said(
    event: Event, routes: Mapping[str, NotificationRoute], calls: Mapping[str, ToolCallRecord]
) -> str:
    data = event.data
    return (
        _agent_said(data)
        or _message_said(data)
        or _tool_said(data, calls)
        or _notice_said(data, routes)
        or event.type.replace("_", " ")
    )


def _agent_said(data: object) -> str | None:
    """The agent's words, its turns and its session's course."""
    match data:
        case AssistantText(text=text, tool_calls=n) if n:
            said = f" and wrote {chars(text)}" if text.strip() else ""
            return f"agent asked for {n} tool call{'s' if n != 1 else ''}{said}"
        case AssistantText(text=text):
            return f"agent answered ({chars(text)})"
        case TurnStarted(message_ids=ids, mode=mode, resumed=resumed):
            how = "resumed after a restart" if resumed else "started"
            many = "s" if len(ids) != 1 else ""
            return f"turn {how} with {len(ids)} message{many} (queue mode {mode})"
        case TurnFinished(outcome=outcome, error=error, duration_s=duration):
            return _turn_finished(outcome, error, duration)
        case SessionCreated(agent_id=agent):
            return f"session started for agent {agent}"
        case ChildSpawned(child_agent_id=child, task=task):
            return f"agent started child agent {child}: {short_input({'task': task})}"
        case ContextCompacted(rows=rows, fallback=fallback):
            how = "left out (the summary failed)" if fallback else "summarized"
            return f"the earlier conversation ({rows} rows) was {how}"
        case RunRecovered(status=status):
            return f"after a restart, the turn that was running is {status}"
    return None


def _message_said(data: object) -> str | None:
    """What became of an operator's message, or of the agent's output, on its way."""
    match data:
        case MessageQueued(sender=sender, decision=decision, kind=kind, origin=origin):
            what = _KINDS.get(kind, "a message")
            who = _who(sender, origin)
            return f"{who} sent {what}: {_DECISIONS.get(decision, decision)}"
        case InterjectionAdmitted(boundary=boundary, sender=sender):
            where = texts.BOUNDARY_WORDS.get(boundary, boundary.replace("_", " "))
            return f"{_who(sender)}'s message joined the running turn {where}"
        case InterjectionDrainFailed(boundary=boundary, error=error):
            return f"taking waiting messages in at {boundary} failed ({error}); they wait again"
        case MessageDropped(reason=reason, sender=sender):
            return f"{_who(sender)}'s message was dropped: {reason}"
        case InboundTruncated(length=length):
            return f"an operator's message of {length:,} characters was cut to fit"
        case OutputUnroutable(kind=kind):
            return f"the agent's {kind} found no conversation to go to"
    return None


def _tool_said(data: object, calls: Mapping[str, ToolCallRecord]) -> str | None:
    """A tool call's course: started, asked approval, decided, finished."""
    match data:
        case ToolStarted(name=name, input=tool_input):
            given = short_input(masked(tool_input))
            return f"tool {name} started" + (f": {given}" if given else "")
        case ToolFinished() as finished:
            return _tool_finished(finished, calls.get(finished.tool_use_id))
        case ApprovalRequested(tool=tool, input=tool_input, reshown=reshown):
            again = " again after a restart" if reshown else ""
            shown = short_input(masked(tool_input))
            return f"tool {tool} asks an operator's approval{again}: {shown}"
        case ApprovalDecided(tool=tool, status=status, decided_by=by):
            return _approval(tool, status, by)
    return None


def _notice_said(data: object, routes: Mapping[str, NotificationRoute]) -> str | None:
    """Notifications, an admin's actions, settings and the model's refusals and retries."""
    match data:
        case NotificationRequested() as n:
            return _notification(n, routes.get(n.notification_id))
        case Unroutable(notification_id=notification_id, summary=summary):
            return f"notification {notification_id} found no operator to go to: {summary}"
        case AdminAction(admin=admin, action=action, detail=detail):
            return _admin(admin, action, detail)
        case QueueModeChanged(mode=mode):
            return f"queue mode set to {mode or 'the workspace default'}"
        case ProviderRetry(error=error) if error.startswith(FALLING_BACK):
            return f"model request failed; {error}"
        case ProviderRetry(attempt=attempt, error=error):
            return f"model request failed ({error}); trying again (attempt {attempt})"
        case ProviderRequestRefused(problems=problems):
            return "model request refused before sending: " + "; ".join(problems)
    return None


def _who(sender: str | None, origin: Origin | None = None) -> str:
    """Who sent a message: an operator, or an agent (a parent's task, a child's report: its
    sender is an agent id, `workspace/agent`, which no operator id is)."""
    if not sender:
        return "someone"
    if origin is Origin.TASK or (origin is None and "/" in sender):
        return f"agent {sender}"
    return f"operator {sender}" if origin in (None, Origin.OPERATOR) else sender


def _tool_finished(finished: ToolFinished, call: ToolCallRecord | None) -> str:
    ran = None
    if call is not None and call.finished_at is not None:
        ran = took(call.finished_at - call.started_at)
    error = call.result.error if call is not None and call.result is not None else None
    name, summary = finished.name, finished.summary
    if error is not None and error.kind in ("denied", "approval_timed_out"):
        return f"tool {name} was not run: {summary}"
    if error is not None and error.kind == "interrupted":  # a restart cut it off
        return f"tool {name} was interrupted" + (f" after {ran}" if ran else "") + f": {summary}"
    if finished.status is ToolStatus.CANCELLED:
        return f"tool {name} stopped" + (f" after {ran}" if ran else "") + f": {summary}"
    outcome = "ok" if finished.status is ToolStatus.SUCCESS else f"error: {summary}"
    return f"tool {name} ran {ran}, {outcome}" if ran else f"tool {name} ran, {outcome}"


def _turn_finished(outcome: RunStatus, error: str | None, duration: float) -> str:
    why = f": {error}" if error else ""
    match outcome:
        case RunStatus.COMPLETED:
            return f"turn finished after {took(duration)}"
        case RunStatus.STOPPED:
            return f"turn stopped after {took(duration)}{why}"
        case RunStatus.INTERRUPTED:
            return f"turn interrupted after {took(duration)} (the process ended)"
    return f"turn {outcome} after {took(duration)}{why}"


def _approval(tool: str, status: ApprovalStatus, by: str | None) -> str:
    who = by if by is None or by.startswith(("admin ", "operator ")) else f"operator {by}"
    match status:
        case ApprovalStatus.APPROVED:
            return f"{who} approved tool {tool}"
        case ApprovalStatus.DENIED:
            return f"{who} denied tool {tool}"
        case ApprovalStatus.TIMED_OUT:
            return f"no one approved tool {tool} in time: it was not run"
        case ApprovalStatus.CANCELLED:
            return f"the turn stopped while tool {tool} waited for approval"
    return f"the approval of tool {tool} is {status}"


def _admin(admin: str, action: AdminActionKind, detail: str) -> str:
    did = admin_action_words(action)
    if action is AdminActionKind.STOP_TURN and detail == "stopped":
        return f"{by_admin(admin)} {did}"
    if action is AdminActionKind.SET_QUEUE_MODE:
        return f"{by_admin(admin)} {did}: {detail.replace(' -> ', ARROW)}"
    if action in _ON_DELIVERY:
        return f"{by_admin(admin)} {did}: {detail}"
    return f"{by_admin(admin)} {did} ({detail})"


def _notification(n: NotificationRequested, route: NotificationRoute | None) -> str:
    head = f"agent notified the {n.target_operator_boundary.replace('_', ' ')}"
    if n.requested_by_agent_id != n.agent_id:
        head += f" (raised by {n.requested_by_agent_id})"
    if route is None:
        return f"{head}: not routed yet \u2014 {n.summary}"
    if route.route is None:
        return f"{head}: no route ({route.routing}) \u2014 {n.summary}"
    where = place(route.route.conversation_key, {}).where
    status = route.delivery_status
    sent = _DELIVERY.get(status, str(status)) if status is not None else "not sent yet"
    return f"{head} via {where}, {sent} \u2014 {n.summary}"
