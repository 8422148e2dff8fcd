"""The bridge's store: its tables' reads as named, typed operations, and its transactions.

The bridge's tables live in the runtime's database (migrated as the "bridge" component);
every bridge SQL statement is here or in `transaction.py`. The bridge reads no runtime table:
what it needs of the runtime it asks the runtime's store for.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager

from bridge.events import AdminActionKind
from bridge.store import intake
from bridge.store.records import (
    AdminActionRecord,
    Backlog,
    Conversation,
    ConversationName,
    FailedRoute,
    Held,
    Intent,
    NewRequest,
    NotificationDelivery,
    NotificationPost,
    NotificationRoute,
    NotificationRouting,
    StoredRequest,
    read_intent,
)
from bridge.store.transaction import BridgeTx
from bridge.types import OPEN_DELIVERY, DeliveryKind, DeliveryStatus, Route
from runtime.errors import StoreConflictError
from runtime.store.retention import BATCH, in_batches
from runtime.store.store import Store
from runtime.store.writer import Writer


def _among(statuses: Sequence[DeliveryStatus]) -> str:
    """Statuses spelled out in the SQL, as a partial index's WHERE spells them: SQLite uses
    such an index only for the same literal terms, never for bound parameters."""
    return ", ".join(f"'{s.value}'" for s in statuses)


_OPEN = _among(OPEN_DELIVERY)
_SHOWN = _among((*OPEN_DELIVERY, DeliveryStatus.FAILED))
_FINISHED = _among((DeliveryStatus.ACCEPTED_BY_TRANSPORT, DeliveryStatus.FAILED))

# The reads run per message or per delivery, each served by an index (the primary key, or
# migration 3's): tests/runtime/test_query_plans.py fails on a full table scan in any of them.
REFUSAL_REPLIED_AT = "SELECT replied_at FROM refusals WHERE sender_key = ?"
CURSOR = "SELECT seq FROM cursors WHERE name = ?"
NEXT_INTENT = (
    f"SELECT * FROM deliveries WHERE conversation_key = ? AND status IN ({_OPEN})"
    " ORDER BY seq LIMIT 2"
)

NOTIFICATION_AT = (
    "SELECT nr.notification_id, nr.session_id, nr.agent_id, nr.requested_by_agent_id,"
    " nr.summary FROM delivery_posts dp JOIN notification_routes nr"
    " ON nr.delivery_id = dp.delivery_id WHERE dp.workspace_key = ? AND dp.message_id = ?"
    " AND nr.session_id IS NOT NULL LIMIT 1"
)
DECISION_AT = (
    "SELECT dc.kind, dc.ref FROM delivery_posts dp JOIN decision_posts dc"
    " ON dc.delivery_id = dp.delivery_id WHERE dp.workspace_key = ? AND dp.message_id = ?"
    " LIMIT 1"
)

# The admin console's reads of one workspace (migration 7's indexes).
WORKSPACE_DELIVERIES = (
    f"SELECT * FROM deliveries WHERE workspace_id = ? AND status IN ({_SHOWN}) ORDER BY seq"
)
INTENT = "SELECT * FROM deliveries WHERE id = ?"
ADMIN_ACTIONS = "SELECT * FROM admin_actions WHERE workspace_id = ? ORDER BY id DESC LIMIT ?"


def notification_routes_sql(ids: int) -> str:
    """Where these notifications went: a lookup by the primary key each."""
    return (
        "SELECT nr.notification_id, nr.status AS routing, nr.delivery_id, d.route, d.status"
        " FROM notification_routes nr LEFT JOIN deliveries d ON d.id = nr.delivery_id"
        f" WHERE nr.notification_id IN ({','.join('?' * ids)})"
    )


def seen_sql(keys: int) -> str:
    """Whether any of `keys` platform ids was seen: a lookup by the primary key each."""
    return f"SELECT 1 FROM inbound_seen WHERE dedupe_key IN ({','.join('?' * keys)}) LIMIT 1"


# Pruning: each statement deletes at most its last parameter's number of rows, found by age
# through an index and removed by the primary key, in a short transaction of its own
# (`Store.delete_sql`).
PRUNE_SEEN = (
    "DELETE FROM inbound_seen WHERE dedupe_key IN (SELECT dedupe_key FROM inbound_seen"
    " WHERE seen_at < ? LIMIT ?)"
)
PRUNE_REFUSALS = (
    "DELETE FROM refusals WHERE sender_key IN (SELECT sender_key FROM refusals"
    " WHERE replied_at < ? LIMIT ?)"
)
# A notification's posts stay as long as the notification: a reply to it can come late.
PRUNE_POSTS = (
    "DELETE FROM delivery_posts WHERE (delivery_id, chunk) IN (SELECT delivery_id, chunk"
    " FROM delivery_posts WHERE posted_at < ? AND kind != 'notification' LIMIT ?)"
)
PRUNE_DELIVERIES = (
    "DELETE FROM deliveries WHERE seq IN (SELECT seq FROM deliveries"
    f" WHERE status IN ({_FINISHED}) AND updated_at < ? AND NOT (status = ? AND kind = ?)"
    " LIMIT ?)"
)


def _nothing(conversation_key: str) -> None:
    return None


class BridgeStore:
    def __init__(self, store: Store) -> None:
        self._store = store
        self.on_enqueue: Callable[[str], None] = _nothing  # the outbox's wake
        # Replicas: whether a conversation's deliveries are sent here (else a hint is left
        # for the replica serving its workspace: `bridge/placement.py`).
        self.sent_here: Callable[[str], bool] = lambda conversation_key: True

    @property
    def runtime_store(self) -> Store:
        """For the bridge store's own modules (`pairing.py`), which read through it."""
        return self._store

    @asynccontextmanager
    async def write(self) -> AsyncIterator[BridgeTx]:
        """A transaction of the bridge's own."""
        async with self._store.write() as w:
            yield self.join(w)

    def join(self, writer: Writer) -> BridgeTx:
        """The bridge's writes in a transaction the runtime opened (`Runtime.submit`'s
        `also`)."""
        return BridgeTx(writer, self.on_enqueue, self.sent_here)

    # -- inbound -----------------------------------------------------------------------

    async def seen(self, keys: Sequence[str]) -> bool:
        """Whether any of these platform ids was handled before."""
        return bool(await self._store.point_sql(seen_sql(len(keys)), keys))

    async def held(self) -> list[Held]:
        """Operators' messages still waiting for their files, oldest first."""
        rows = await self._store.read_sql(
            "SELECT id, platform, workspace_id, body, attempts FROM inbound_pending"
            " ORDER BY created_at, id"
        )
        return [
            Held(r["id"], r["platform"], r["workspace_id"], r["body"], int(r["attempts"]))
            for r in rows
        ]

    async def refusal_replied_at(self, sender_key: str) -> float | None:
        rows = await self._store.point_sql(REFUSAL_REPLIED_AT, (sender_key,))
        return float(rows[0]["replied_at"]) if rows else None

    async def conversations(self) -> list[Conversation]:
        rows = await self._store.read_sql(
            "SELECT conversation_key, session_id, route FROM conversations"
        )
        return [
            Conversation(
                r["conversation_key"], r["session_id"], Route.model_validate_json(r["route"])
            )
            for r in rows
        ]

    async def conversation_names(self) -> dict[str, ConversationName]:
        """How people name each conversation an operator wrote in, by conversation key."""
        rows = await self._store.read_sql(
            "SELECT conversation_key, workspace_id, is_direct, title, person, operator_id"
            " FROM conversation_names"
        )
        return {
            r["conversation_key"]: ConversationName(
                r["conversation_key"],
                r["workspace_id"],
                bool(r["is_direct"]),
                r["title"],
                r["person"],
                r["operator_id"],
            )
            for r in rows
        }

    async def take_request(self, request: NewRequest) -> bool:
        """Store a request a door checked; False: one with the same platform id is stored
        already (a retry, perhaps to another replica)."""
        try:
            async with self.write() as tx:
                tx.store_request(request)
        except StoreConflictError:
            return False
        return True

    async def intake(self, after_id: int = 0, limit: int = 100) -> list[StoredRequest]:
        """Requests the doors stored, oldest first: what the active replica hands on."""
        rows = await self._store.read_sql(intake.PENDING, (after_id, limit))
        return [intake.stored(r) for r in rows]

    # -- outbound ----------------------------------------------------------------------

    async def cursor(self, name: str) -> int:
        """How far the ledger has been handled (0: not at all)."""
        rows = await self._store.point_sql(CURSOR, (name,))
        return int(rows[0]["seq"]) if rows else 0

    async def open_conversations(self) -> list[str]:
        """Conversations with an intent not yet accepted: the outbox resumes them."""
        rows = await self._store.read_sql(
            f"SELECT DISTINCT conversation_key FROM deliveries WHERE status IN ({_OPEN})"
        )
        return [r["conversation_key"] for r in rows]

    async def next_intent(self, conversation_key: str) -> tuple[Intent | None, bool]:
        """The conversation's oldest intent not yet accepted, and whether another waits."""
        rows = await self._store.point_sql(NEXT_INTENT, (conversation_key,))
        return (read_intent(rows[0]) if rows else None), len(rows) > 1

    async def intents(self, status: DeliveryStatus | None = None) -> list[Intent]:
        """Every intent (or those in `status`), oldest first."""
        where = " WHERE status = ?" if status else ""
        rows = await self._store.read_sql(
            f"SELECT * FROM deliveries{where} ORDER BY seq", (status,) if status else ()
        )
        return [read_intent(r) for r in rows]

    async def delivery_counts(self) -> dict[DeliveryStatus, int]:
        rows = await self._store.read_sql(
            "SELECT status, COUNT(*) AS n FROM deliveries GROUP BY status ORDER BY status"
        )
        return {DeliveryStatus(r["status"]): int(r["n"]) for r in rows}

    async def outbox_backlog(self) -> list[Backlog]:
        """Deliveries the platform has not accepted yet, per platform, workspace and status."""
        rows = await self._store.read_sql(
            f"SELECT route, status, created_at FROM deliveries WHERE status IN ({_OPEN})"
        )
        groups: dict[tuple[str, str, DeliveryStatus], list[float]] = {}
        for r in rows:
            route = json.loads(r["route"])
            key = (route["platform"], route["workspace_id"], DeliveryStatus(r["status"]))
            groups.setdefault(key, []).append(float(r["created_at"]))
        return [
            Backlog(platform, workspace, status, len(times), min(times))
            for (platform, workspace, status), times in groups.items()
        ]

    async def failed_routes(self, workspace_id: str | None = None) -> list[FailedRoute]:
        """Conversations the platform refused for good, oldest first."""
        where = " WHERE workspace_id = ?" if workspace_id else ""
        rows = await self._store.read_sql(
            f"SELECT conversation_key, workspace_id, reason FROM failed_routes{where}"
            " ORDER BY failed_at",
            (workspace_id,) if workspace_id else (),
        )
        return [FailedRoute(r["conversation_key"], r["workspace_id"], r["reason"]) for r in rows]

    async def notification_deliveries(self) -> dict[str, NotificationDelivery]:
        """Every routed notification: how it was routed and how its delivery stands."""
        rows = await self._store.read_sql(
            "SELECT nr.notification_id, nr.status AS routing, d.status, d.last_error"
            " FROM notification_routes nr LEFT JOIN deliveries d ON d.id = nr.delivery_id"
        )
        return {
            r["notification_id"]: NotificationDelivery(
                NotificationRouting(r["routing"]),
                DeliveryStatus(r["status"]) if r["status"] else None,
                r["last_error"],
            )
            for r in rows
        }

    async def notification_at(self, route: Route, message_id: str) -> NotificationPost | None:
        """The notification posted as message `message_id` (as its transport named it) in
        `route`'s workspace, if it is one."""
        workspace_key = f"{route.platform}:{route.workspace_id}"
        rows = await self._store.point_sql(NOTIFICATION_AT, (workspace_key, message_id))
        if not rows:
            return None
        r = rows[0]
        return NotificationPost(
            r["notification_id"],
            r["session_id"],
            r["agent_id"],
            r["requested_by_agent_id"],
            r["summary"],
        )

    async def decision_at(self, route: Route, message_id: str) -> tuple[str, str] | None:
        """What the message `message_id` in `route`'s workspace asks an operator to decide:
        ("approval", its id) or ("pairing", its code)."""
        workspace_key = f"{route.platform}:{route.workspace_id}"
        rows = await self._store.point_sql(DECISION_AT, (workspace_key, message_id))
        return (str(rows[0]["kind"]), str(rows[0]["ref"])) if rows else None

    # -- the admin console ---------------------------------------------------------------

    async def workspace_deliveries(self, workspace_id: str) -> list[Intent]:
        """A workspace's intents not accepted yet: pending, sending, failed; oldest first."""
        rows = await self._store.read_sql(WORKSPACE_DELIVERIES, (workspace_id,))
        return [read_intent(r) for r in rows]

    async def intent(self, intent_id: str) -> Intent | None:
        rows = await self._store.point_sql(INTENT, (intent_id,))
        return read_intent(rows[0]) if rows else None

    async def notification_routes(self, ids: Sequence[str]) -> dict[str, NotificationRoute]:
        """Where each of these notifications went, by id (absent: not routed yet)."""
        if not ids:
            return {}
        rows = await self._store.read_sql(notification_routes_sql(len(ids)), ids)
        return {
            r["notification_id"]: NotificationRoute(
                r["notification_id"],
                NotificationRouting(r["routing"]),
                r["delivery_id"],
                Route.model_validate_json(r["route"]) if r["route"] else None,
                DeliveryStatus(r["status"]) if r["status"] else None,
            )
            for r in rows
        }

    async def admin_actions(self, workspace_id: str, limit: int = 100) -> list[AdminActionRecord]:
        """What the workspace's admins did, newest first."""
        rows = await self._store.read_sql(ADMIN_ACTIONS, (workspace_id, limit))
        return [
            AdminActionRecord(
                r["workspace_id"],
                r["admin"],
                AdminActionKind(r["action"]),
                r["target"],
                r["session_id"],
                r["detail"],
                float(r["at"]),
            )
            for r in rows
        ]

    async def live_messages(self) -> list[tuple[Route, str]]:
        """The messages progress showed when the last run stopped: (route, message id)."""
        rows = await self._store.read_sql("SELECT route, message_id FROM live_messages")
        return [(Route.model_validate_json(r["route"]), r["message_id"]) for r in rows]

    # -- retention ---------------------------------------------------------------------

    async def prune_seen(self, before: float, batch: int = BATCH) -> int:
        """Forget the platform ids seen before `before`: no platform retries that late."""
        return await in_batches(self._store.delete_sql, PRUNE_SEEN, (before, batch), batch)

    async def prune_deliveries(self, before: float, batch: int = BATCH) -> int:
        """Drop deliveries finished (accepted, or failed) before `before`. A notification's
        failed delivery stays: /status lists it as undelivered, with its error, for as long
        as the notification is kept."""
        params = (before, DeliveryStatus.FAILED, DeliveryKind.NOTIFICATION, batch)
        return await in_batches(self._store.delete_sql, PRUNE_DELIVERIES, params, batch)

    async def prune_posts(self, before: float, batch: int = BATCH) -> int:
        """Forget the platform ids of chunks posted before `before`, but a notification's."""
        return await in_batches(self._store.delete_sql, PRUNE_POSTS, (before, batch), batch)

    async def prune_refusals(self, before: float, batch: int = BATCH) -> int:
        """Drop refusal replies made before `before`: a stranger is answered again after the
        reply interval whether their row is there or not."""
        return await in_batches(self._store.delete_sql, PRUNE_REFUSALS, (before, batch), batch)
