"""The admin console's actions on a workspace: stop a running turn (the same control action
as /stop), change a session's queue mode, retry or discard a failed delivery, send an
undelivered notification to a chosen operator. Each checks that its object belongs to the
workspace, and is recorded as an audit event naming the admin: in the same transaction as
the change for the bridge's own (deliveries, notifications); right after the runtime has
committed it for a stop or a queue mode (the runtime writes those itself). Each returns the
one line the console flashes."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from bridge import texts
from bridge.activity import agent_name
from bridge.admin.errors import NotInWorkspace, NotPossible
from bridge.admin.view import AdminView, workspace_of_agent
from bridge.admin.words import by_admin
from bridge.approvals import already
from bridge.dispatch import raised_by
from bridge.events import AdminActionKind
from bridge.keyed_locks import KeyedLocks
from bridge.places import place
from bridge.service import Bridge
from bridge.status import NOT_ROUTED_YET
from bridge.store.records import AdminActionRecord, Intent, NotificationPost
from bridge.types import DeliveryKind, DeliveryStatus
from config.schema import SwitchboardConfig, WorkspaceConfig
from runtime.errors import StaleRunError, UnknownRunError
from runtime.ids import new_id
from runtime.messages import QueueMode
from runtime.payloads import NotificationRequested
from runtime.records import ApprovalStatus
from runtime.results import StopStatus

log = logging.getLogger(__name__)

TEXT_IN_AUDIT = 200  # characters of a discarded delivery's text kept in its audit event


class Steering:
    def __init__(self, bridge: Bridge, config: SwitchboardConfig) -> None:
        self._bridge = bridge
        self._runtime = bridge.runtime
        self._view = AdminView(bridge, config)
        self._rerouting: KeyedLocks[str] = KeyedLocks()

    async def answer_approval(
        self, workspace: WorkspaceConfig, approval_id: str, approve: bool, admin: str
    ) -> str:
        """Approve or deny a tool call of this workspace waiting for approval, as an
        operator's button would; the admin is named as who decided."""
        if approval_id not in {a.approval_id for a in await self._view.approvals(workspace.id)}:
            raise NotInWorkspace(f"no call of {workspace.id} waits for approval as {approval_id}")
        status = ApprovalStatus.APPROVED if approve else ApprovalStatus.DENIED
        decision = await self._runtime.approvals.decide(approval_id, status, by_admin(admin))
        if decision is not None and not decision.changed:  # another answer came first
            return already(decision.record)
        return f"{'Approved' if approve else 'Denied'} {approval_id}."

    async def stop(self, workspace: WorkspaceConfig, session_id: str, admin: str) -> str:
        """Stop the session's running turn; its conversation is told who stopped it."""
        self._view.check_session(workspace.id, session_id)
        run_id = self._runtime.status(session_id).run_id
        if run_id is None:
            raise NotPossible(f"nothing is running in session {session_id}")
        try:
            result = await self._runtime.stop(session_id, run_id, f"stopped by admin {admin}")
        except (StaleRunError, UnknownRunError):
            raise NotPossible(f"the turn {run_id} had already ended") from None
        stopped = result.status is StopStatus.STOPPED
        route = await self._bridge.router.resolve(session_id, run_id) if stopped else None
        async with self._bridge.store.write() as tx:
            if route is not None:
                notice = texts.STOPPED_BY_ADMIN.format(admin=admin)
                tx.enqueue(new_id("dlv_admin"), route, DeliveryKind.COMMAND_REPLY, notice)
            tx.admin_action(
                AdminActionRecord(
                    workspace.id,
                    admin,
                    AdminActionKind.STOP_TURN,
                    run_id,
                    session_id,
                    result.status.value,
                )
            )
        if not stopped:
            return f"The turn {run_id} was already stopped."
        log.info(
            "turn stopped",
            extra={"session_id": session_id, "run_id": run_id, "by": by_admin(admin)},
        )
        return f"Stopped the turn {run_id} of session {session_id}."

    async def set_queue_mode(
        self, workspace: WorkspaceConfig, session_id: str, mode: QueueMode | None, admin: str
    ) -> str:
        """`mode` None: the workspace's queue mode again (as a new conversation gets it)."""
        self._view.check_session(workspace.id, session_id)
        before = self._runtime.status(session_id).mode
        await self._runtime.set_queue_mode(session_id, mode or QueueMode(workspace.queue_mode))
        after = self._runtime.status(session_id).mode
        async with self._bridge.store.write() as tx:
            tx.admin_action(
                AdminActionRecord(
                    workspace.id,
                    admin,
                    AdminActionKind.SET_QUEUE_MODE,
                    session_id,
                    session_id,
                    f"{before} -> {after}",
                )
            )
        return f"Session {session_id} now queues in {after} mode."

    async def retry(self, workspace: WorkspaceConfig, delivery_id: str, admin: str) -> str:
        """A failed delivery goes out again, in its place in its conversation's order; the
        parts it already delivered are not sent twice."""
        intent = await self._failed(workspace, delivery_id)
        async with self._bridge.store.write() as tx:
            tx.retry_intent(intent.id, intent.route.conversation_key)
            kind = AdminActionKind.RETRY_DELIVERY
            tx.admin_action(self._on_delivery(workspace, admin, kind, intent))
        return f"Delivery {intent.id} is queued again."

    async def discard(self, workspace: WorkspaceConfig, delivery_id: str, admin: str) -> str:
        """A failed delivery is given up; its audit event keeps what it said."""
        intent = await self._failed(workspace, delivery_id)
        async with self._bridge.store.write() as tx:
            tx.discard_intent(intent.id)
            kind = AdminActionKind.DISCARD_DELIVERY
            tx.admin_action(self._on_delivery(workspace, admin, kind, intent, said=intent.text))
        return f"Delivery {intent.id} was discarded."

    async def config_changed(
        self, workspace_ids: Sequence[str], admin: str, kind: AdminActionKind, detail: str
    ) -> None:
        """A config change the console applied, in the audit of each workspace it touched."""
        async with self._bridge.store.write() as tx:
            for workspace_id in workspace_ids:
                tx.admin_action(
                    AdminActionRecord(workspace_id, admin, kind, workspace_id, None, detail)
                )

    def _on_delivery(
        self,
        workspace: WorkspaceConfig,
        admin: str,
        kind: AdminActionKind,
        intent: Intent,
        said: str | None = None,
    ) -> AdminActionRecord:
        """The audit record of an admin's action on a failed delivery: its kind, where it
        went, what it `said` (the start of it: kept for a discarded one, whose audit event is
        all that is left of it) and its last error. Which delivery it was is said in words
        ("the answer to Telegram, DM with Alice"): its id is no one's word."""
        text = "" if said is None else f": {said[:TEXT_IN_AUDIT]!r}"
        where = place(intent.route.conversation_key, self._bridge.sessions.names()).where
        which = texts.BOARD_FAILED_DELIVERY.format(
            kind=texts.DELIVERY_KIND_WORDS[intent.kind], where=where
        )
        return AdminActionRecord(
            workspace.id,
            admin,
            kind,
            intent.id,
            self._bridge.sessions.session_of(intent.route),
            f"{which}{text}; last error: {intent.last_error}",
        )

    async def _failed(self, workspace: WorkspaceConfig, delivery_id: str) -> Intent:
        intent = await self._view.intent(workspace.id, delivery_id)
        if intent.status is not DeliveryStatus.FAILED:
            raise NotPossible(f"delivery {delivery_id} is {intent.status}, not failed")
        return intent

    async def reroute(
        self, workspace: WorkspaceConfig, notification_id: str, operator_id: str, admin: str
    ) -> str:
        """Send an undelivered notification to `operator_id`'s DM, through the outbox; a
        reply to it reaches the agent that raised it, as a reply to the original would. One
        at a time per notification: a second press finds it on its way, not undelivered."""
        async with self._rerouting.hold(notification_id):
            return await self._reroute(workspace, notification_id, operator_id, admin)

    async def _reroute(
        self, workspace: WorkspaceConfig, notification_id: str, operator_id: str, admin: str
    ) -> str:
        n = await self._runtime.store.notification(notification_id)
        if n is None or workspace_of_agent(n.agent_id) != workspace.id:
            raise NotInWorkspace(f"workspace {workspace.id} has no notification {notification_id}")
        found = [
            u
            for u in await self._view.undelivered(workspace.id)
            if u.notification_id == n.notification_id
        ]
        if not found:
            raise NotPossible(f"notification {notification_id} is not undelivered")
        if found[0].status == NOT_ROUTED_YET:  # the dispatcher would deliver it too
            raise NotPossible(
                f"notification {notification_id} is still being routed: send it elsewhere once "
                "its delivery has failed or it found no route"
            )
        operator = next((o for o in workspace.operators if o.id == operator_id), None)
        if operator is None:
            raise NotPossible(f"workspace {workspace.id} has no operator {operator_id!r}")
        route = self._bridge.router.operator_route(workspace, operator)
        if route is None:
            raise NotPossible(
                f"operator {operator_id} has no direct conversation on a running platform"
            )
        text = texts.NOTIFICATION.format(
            agent=agent_name(n.requested_by_agent_id), message=n.message
        ) + raised_by(NotificationRequested.of(n))
        post = NotificationPost(
            n.notification_id, n.session_id, n.agent_id, n.requested_by_agent_id, n.summary
        )
        intent_id = new_id("dlv_reroute")
        async with self._bridge.store.write() as tx:
            tx.enqueue(intent_id, route, DeliveryKind.NOTIFICATION, text)
            tx.reroute_notification(intent_id, post)
            tx.admin_action(
                AdminActionRecord(
                    workspace.id,
                    admin,
                    AdminActionKind.REROUTE_NOTIFICATION,
                    n.notification_id,
                    n.session_id,
                    f"to operator {operator_id} via {route.conversation_key} as {intent_id}",
                )
            )
        return f"Notification {n.notification_id} is on its way to {operator_id}."
