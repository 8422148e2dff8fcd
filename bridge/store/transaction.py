"""The bridge's writes, inside a runtime transaction: each a named operation, with its SQL.

A `BridgeTx` wraps the runtime's `Writer`, so a bridge record commits together with what the
runtime writes (a message stored with its platform id marked seen; an intent with the ledger
cursor that produced it). An enqueued intent wakes the outbox once the transaction commits.
What people read of these records (a message to chat, an error, an admin's action) is stored
with the process's secrets masked (`Writer.mask`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import partial

from bridge.events import AdminAction, DeliveryQueued, RequestForwarded
from bridge.store import intake
from bridge.store.buttons import encode
from bridge.store.records import (
    AdminActionRecord,
    ConversationName,
    NewRequest,
    NotificationPost,
    NotificationRouting,
)
from bridge.types import Button, DeliveryKind, DeliveryStatus, Route, workspace_of_key
from runtime.events import Event, Payload
from runtime.store.writer import Writer


class BridgeTx:
    def __init__(
        self,
        writer: Writer,
        on_enqueue: Callable[[str], None],
        sent_here: Callable[[str], bool] = lambda conversation_key: True,
    ) -> None:
        self._w = writer
        self._on_enqueue = on_enqueue
        self._sent_here = sent_here

    def now(self) -> float:
        return self._w.now()

    def _error(self, error: str | None) -> str | None:
        """A platform's error as stored: it may quote a URL that holds a bot token."""
        return None if error is None else self._w.mask(error)

    def emit(
        self, payload: Payload, session_id: str | None = None, run_id: str | None = None
    ) -> None:
        self._w.emit(Event(payload, session_id, run_id))

    # -- inbound -----------------------------------------------------------------------

    def mark_seen(self, keys: Iterable[str], message_id: str | None) -> None:
        """The platform's ids of a message handled now; a second copy fails this commit."""
        for key in keys:
            self._w.write_sql(
                "INSERT INTO inbound_seen (dedupe_key, message_id, seen_at) VALUES (?, ?, ?)",
                (key, message_id, self.now()),
            )

    def seen_as(self, keys: Iterable[str], message_id: str) -> None:
        """The message these platform ids became, once it is submitted (after its files)."""
        for key in keys:
            self._w.write_sql(
                "UPDATE inbound_seen SET message_id = ? WHERE dedupe_key = ?", (message_id, key)
            )

    def hold(self, pending_id: str, platform: str, workspace_id: str, body: str) -> None:
        """An operator's message held until its files are downloaded (`body`: its JSON)."""
        self._w.write_sql(
            "INSERT INTO inbound_pending (id, platform, workspace_id, body, created_at)"
            " VALUES (?, ?, ?, ?, ?)",
            (pending_id, platform, workspace_id, body, self.now()),
        )

    def release(self, pending_id: str) -> None:
        """The held message was submitted (or answered): it is no longer pending."""
        self._w.write_sql("DELETE FROM inbound_pending WHERE id = ?", (pending_id,))

    def hold_failed(self, pending_id: str, error: str) -> None:
        self._w.write_sql(
            "UPDATE inbound_pending SET attempts = attempts + 1, last_error = ? WHERE id = ?",
            (self._w.mask(error), pending_id),
        )

    def refusal_replied(self, sender_key: str) -> None:
        self._w.write_sql(
            "INSERT INTO refusals (sender_key, replied_at) VALUES (?, ?) ON CONFLICT"
            " (sender_key) DO UPDATE SET replied_at = excluded.replied_at",
            (sender_key, self.now()),
        )

    def bind_conversation(self, key: str, session_id: str, workspace_id: str, route: Route) -> None:
        """The conversation's session from now on (a new one after `/new`)."""
        self._w.write_sql(
            "INSERT INTO conversations (conversation_key, session_id, workspace_id, route,"
            " updated_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (conversation_key) DO UPDATE"
            " SET session_id = excluded.session_id, updated_at = excluded.updated_at",
            (key, session_id, workspace_id, route.model_dump_json(), self.now()),
        )

    def name_conversation(self, name: ConversationName) -> None:
        """How people name a conversation, as its latest operator's message told."""
        self._w.write_sql(
            "INSERT INTO conversation_names (conversation_key, workspace_id, is_direct, title,"
            " person, operator_id, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT"
            " (conversation_key) DO UPDATE SET is_direct = excluded.is_direct,"
            " title = excluded.title, person = excluded.person,"
            " operator_id = excluded.operator_id, updated_at = excluded.updated_at",
            (
                name.key,
                name.workspace_id,
                int(name.direct),
                name.title,
                name.person,
                name.operator_id,
                self.now(),
            ),
        )

    def store_request(self, r: NewRequest) -> None:
        """A request a door checked, for the active replica to hand on; a second copy of the
        same platform id fails this commit (`StoreConflictError`)."""
        # the replayer reads on from the newest id it read: ids commit in their order
        self._w.write_sql(intake.INSERT, intake.values(r, self.now()), ordered=True)
        self.emit(RequestForwarded(platform=r.platform, workspace_id=r.workspace_id))

    def request_handled(self, request_id: int) -> None:
        """Handed on (or given up, saying so in the log)."""
        self._w.write_sql(intake.HANDLED, (request_id,))

    def request_failed(self, request_id: int, error: str) -> None:
        self._w.write_sql(intake.FAILED, (self._w.mask(error), request_id))

    # -- outbound ----------------------------------------------------------------------

    def advance_cursor(self, name: str, seq: int | None) -> None:
        """The ledger has been handled up to `seq` (never moves back)."""
        self._w.write_sql(
            "INSERT INTO cursors (name, seq) VALUES (?, ?) ON CONFLICT (name) DO UPDATE"
            " SET seq = CASE WHEN excluded.seq > cursors.seq THEN excluded.seq"
            " ELSE cursors.seq END",
            (name, seq),
        )

    def enqueue(
        self,
        intent_id: str,
        route: Route,
        kind: DeliveryKind,
        text: str,
        buttons: Sequence[Button] = (),
        replaces: str | None = None,
    ) -> None:
        """A delivery intent, with the buttons under it; the same id twice is one intent (a
        ledger event handled again after a crash). Its conversation's outbox worker wakes
        after the commit. Every message to chat passes here: the secrets the process knows
        are masked in it (and in its buttons' labels). `replaces`: the platform's id of a
        message it rewrites in place where the platform can (else it is posted anew)."""
        now = self.now()
        shown = [Button(self._w.mask(b.label), b.command, b.row) for b in buttons]
        self._w.write_sql(
            "INSERT INTO deliveries (id, conversation_key, route, kind, text, status,"
            " created_at, updated_at, workspace_id, buttons, replaces)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
            (
                intent_id,
                route.conversation_key,
                route.model_dump_json(),
                kind,
                self._w.mask(text),
                DeliveryStatus.PENDING,
                now,
                now,
                route.workspace_id,
                encode(shown),
                replaces,
            ),
        )
        self._wake(route.conversation_key)

    def route_notification(
        self, notification_id: str, intent_id: str | None, post: NotificationPost | None = None
    ) -> None:
        """A notification goes out as intent `intent_id`; None: it has no route. `post` says
        whose it is, so a reply to it reaches that agent."""
        routing = NotificationRouting.QUEUED if intent_id else NotificationRouting.UNROUTABLE
        self._w.write_sql(
            "INSERT INTO notification_routes (notification_id, delivery_id, status, session_id,"
            " agent_id, requested_by_agent_id, summary) VALUES (?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (notification_id) DO NOTHING",
            (
                notification_id,
                intent_id,
                routing,
                post.session_id if post else None,
                post.agent_id if post else None,
                post.requested_by_agent_id if post else None,
                post.summary if post else None,
            ),
        )

    def asks(self, intent_id: str, kind: str, ref: str) -> None:
        """Intent `intent_id` asks an operator to decide `ref` (a tool call's approval id, a
        pairing code): its buttons, or a reply to it, answer that."""
        self._w.write_sql(
            "INSERT INTO decision_posts (delivery_id, kind, ref) VALUES (?, ?, ?)"
            " ON CONFLICT (delivery_id) DO NOTHING",
            (intent_id, kind, ref),
        )

    def execute(self, sql: str, params: Sequence[object] = ()) -> None:
        """A statement of one of the bridge store's own modules (`pairing.py`)."""
        self._w.write_sql(sql, params)

    def reroute_notification(self, intent_id: str, post: NotificationPost) -> None:
        """The notification goes out (again) as intent `intent_id`: an admin chose its route.
        A reply to the new post reaches the same agent."""
        self._w.write_sql(
            "INSERT INTO notification_routes (notification_id, delivery_id, status, session_id,"
            " agent_id, requested_by_agent_id, summary) VALUES (?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (notification_id) DO UPDATE SET delivery_id = excluded.delivery_id,"
            " status = excluded.status, session_id = excluded.session_id,"
            " agent_id = excluded.agent_id,"
            " requested_by_agent_id = excluded.requested_by_agent_id,"
            " summary = excluded.summary",
            (
                post.notification_id,
                intent_id,
                NotificationRouting.QUEUED,
                post.session_id,
                post.agent_id,
                post.requested_by_agent_id,
                post.summary,
            ),
        )

    def record_post(
        self,
        intent_id: str,
        chunk: int,
        route: Route,
        message_id: str,
        kind: DeliveryKind,
        *,
        rewritten: bool = False,
    ) -> None:
        """The platform's id of a chunk it accepted (unique in the workspace), so a reply to
        that message can be matched. `rewritten`: the message was another delivery's,
        rewritten in place by this one, which it is from now on (a press of a button that
        names no delivery runs this one's)."""
        if rewritten:
            self._w.write_sql(
                "DELETE FROM delivery_posts WHERE workspace_key = ? AND message_id = ?",
                (f"{route.platform}:{route.workspace_id}", message_id),
            )
        self._w.write_sql(
            "INSERT INTO delivery_posts (delivery_id, chunk, workspace_key, message_id, kind,"
            " posted_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (delivery_id, chunk) DO UPDATE"
            " SET message_id = excluded.message_id, posted_at = excluded.posted_at",
            (
                intent_id,
                chunk,
                f"{route.platform}:{route.workspace_id}",
                message_id,
                kind,
                self.now(),
            ),
        )

    def update_intent(
        self,
        intent_id: str,
        status: DeliveryStatus,
        *,
        attempts: int | None = None,
        chunks: int | None = None,
        error: str | None = None,
    ) -> None:
        """Progress of a send under way; the last error stays until a newer one."""
        self._w.write_sql(
            "UPDATE deliveries SET status = ?, attempts = COALESCE(?, attempts),"
            " chunks_sent = COALESCE(?, chunks_sent), last_error = COALESCE(?, last_error),"
            " updated_at = ? WHERE id = ?",
            (status, attempts, chunks, self._error(error), self.now(), intent_id),
        )

    def finish_intent(
        self,
        intent_id: str,
        status: DeliveryStatus,
        error: str | None,
        *,
        attempts: int | None = None,
        chunks: int | None = None,
    ) -> None:
        """The intent is done: accepted (no error) or failed (the error says why)."""
        self._w.write_sql(
            "UPDATE deliveries SET status = ?, attempts = COALESCE(?, attempts),"
            " chunks_sent = COALESCE(?, chunks_sent), last_error = ?, updated_at = ?"
            " WHERE id = ?",
            (status, attempts, chunks, self._error(error), self.now(), intent_id),
        )

    def retry_intent(self, intent_id: str, conversation_key: str) -> None:
        """A failed intent is pending again; its conversation's worker takes it in its place
        (by its sequence number) once this commits. The chunks it delivered stay delivered."""
        self._w.write_sql(
            "UPDATE deliveries SET status = ?, updated_at = ? WHERE id = ? AND status = ?",
            (DeliveryStatus.PENDING, self.now(), intent_id, DeliveryStatus.FAILED),
        )
        self._wake(conversation_key)

    def _wake(self, conversation_key: str) -> None:
        """The conversation's sender is woken once this commits: here, or, where another
        replica serves its workspace, there by a hint."""
        if self._sent_here(conversation_key):
            self._w.after_commit(partial(self._on_enqueue, conversation_key))
        else:
            queued = DeliveryQueued(
                workspace_id=workspace_of_key(conversation_key), conversation_key=conversation_key
            )
            self._w.emit(Event(queued))

    def discard_intent(self, intent_id: str) -> None:
        """A failed intent an admin gave up on (its audit event keeps what it said)."""
        self._w.write_sql(
            "DELETE FROM deliveries WHERE id = ? AND status = ?", (intent_id, DeliveryStatus.FAILED)
        )

    def admin_action(self, action: AdminActionRecord) -> None:
        """What an admin did, in the workspace's list and, as its audit event, in the ledger
        (under the session it concerns, if any); secrets masked in its detail."""
        detail = self._w.mask(action.detail)
        self._w.write_sql(
            "INSERT INTO admin_actions (workspace_id, admin, action, target, session_id, detail,"
            " at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                action.workspace_id,
                action.admin,
                action.action,
                action.target,
                action.session_id,
                detail,
                self.now(),
            ),
        )
        payload = AdminAction(
            admin=action.admin,
            action=action.action,
            workspace_id=action.workspace_id,
            target=action.target,
            detail=detail,
        )
        self.emit(payload, action.session_id)

    def route_failed(self, route: Route, reason: str) -> None:
        self._w.write_sql(
            "INSERT INTO failed_routes (conversation_key, workspace_id, route, reason,"
            " failed_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (conversation_key) DO UPDATE"
            " SET reason = excluded.reason, failed_at = excluded.failed_at",
            (
                route.conversation_key,
                route.workspace_id,
                route.model_dump_json(),
                self._w.mask(reason),
                self.now(),
            ),
        )

    def route_works(self, conversation_key: str) -> None:
        self._w.write_sql(
            "DELETE FROM failed_routes WHERE conversation_key = ?", (conversation_key,)
        )

    # -- live messages -----------------------------------------------------------------

    def live_shown(self, route: Route, message_ids: Iterable[str]) -> None:
        """These messages are what progress shows in this conversation now."""
        key = route.conversation_key
        self._w.write_sql("DELETE FROM live_messages WHERE conversation_key = ?", (key,))
        for message_id in message_ids:
            self._w.write_sql(
                "INSERT INTO live_messages (conversation_key, message_id, route, shown_at)"
                " VALUES (?, ?, ?, ?)",
                (key, message_id, route.model_dump_json(), self.now()),
            )

    def live_removed(self, route: Route, message_id: str) -> None:
        self._w.write_sql(
            "DELETE FROM live_messages WHERE conversation_key = ? AND message_id = ?",
            (route.conversation_key, message_id),
        )
