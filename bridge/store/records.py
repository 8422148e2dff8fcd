"""What the bridge keeps in its own tables, as the bridge's code reads it.

The door process imports it too, for the requests it stores (`NewRequest`): what it imports is
what the door process's start costs, so the bridge's models are imported where an intent is
read (`read_intent`), and elsewhere are types only."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bridge.events import AdminActionKind
    from bridge.types import Button, DeliveryKind, DeliveryStatus, Route


class NotificationRouting(StrEnum):
    """What the dispatcher did with a notification."""

    QUEUED = "queued"  # a delivery intent carries it
    UNROUTABLE = "unroutable"  # no operator route: kept, listed by /status


@dataclass(frozen=True, slots=True)
class Intent:
    """One outgoing message, written before any send (DESIGN §3, Delivery)."""

    id: str
    seq: int
    route: Route
    kind: DeliveryKind
    text: str
    status: DeliveryStatus
    attempts: int
    chunks_sent: int
    last_error: str | None
    created_at: float
    updated_at: float
    buttons: tuple[Button, ...] = ()  # under its last part
    replaces: str | None = None  # the message it rewrites in place (its platform id), if any


def read_intent(r: Any) -> Intent:
    """An intent from a row of `deliveries`."""
    from bridge.store.buttons import decode
    from bridge.types import DeliveryKind, DeliveryStatus, Route

    return Intent(
        id=r["id"],
        seq=r["seq"],
        route=Route.model_validate_json(r["route"]),
        kind=DeliveryKind(r["kind"]),
        text=r["text"],
        status=DeliveryStatus(r["status"]),
        attempts=r["attempts"],
        chunks_sent=r["chunks_sent"],
        last_error=r["last_error"],
        created_at=r["created_at"],
        updated_at=r["updated_at"],
        buttons=decode(r["buttons"]),
        replaces=r["replaces"],
    )


@dataclass(frozen=True, slots=True)
class Conversation:
    """A conversation and the session that lives in it."""

    key: str
    session_id: str
    route: Route


@dataclass(frozen=True, slots=True)
class ConversationName:
    """How people name a conversation: what the platform told of it with the last operator's
    message there (kept so that nobody has to look up an id)."""

    key: str  # the conversation key (`Route.conversation_key`)
    workspace_id: str
    direct: bool  # a DM / private chat
    title: str | None  # the chat's or channel's own name, when the platform gives it
    person: str | None  # the name of who wrote last, as the platform gives it
    operator_id: str  # which operator of the config that is


@dataclass(frozen=True, slots=True)
class FailedRoute:
    conversation_key: str
    workspace_id: str
    reason: str


@dataclass(frozen=True, slots=True)
class Backlog:
    """Deliveries not accepted yet, for one platform, workspace and status."""

    platform: str
    workspace: str
    status: DeliveryStatus
    count: int
    oldest_created_at: float


@dataclass(frozen=True, slots=True)
class NotificationDelivery:
    """Where a routed notification stands: its routing, and its delivery if it has one."""

    routing: NotificationRouting
    delivery_status: DeliveryStatus | None
    last_error: str | None


@dataclass(frozen=True, slots=True)
class NotificationPost:
    """A notification as posted in chat: what a reply to it, or a press of its buttons,
    acts on (the session of the agent that raised it, a child's parent for a child's)."""

    notification_id: str
    session_id: str
    agent_id: str
    requested_by_agent_id: str
    summary: str


@dataclass(frozen=True, slots=True)
class Held:
    """An operator's message waiting for its files (`body`: what `attachments` stored)."""

    id: str
    platform: str
    workspace_id: str
    body: str
    attempts: int


@dataclass(frozen=True, slots=True)
class NotificationRoute:
    """Where a notification went: its routing, and its delivery's route and status."""

    notification_id: str
    routing: NotificationRouting
    delivery_id: str | None
    route: Route | None
    delivery_status: DeliveryStatus | None


@dataclass(frozen=True, slots=True)
class AdminActionRecord:
    """One thing an admin did from the console (`AdminAction` is its ledger event)."""

    workspace_id: str
    admin: str
    action: AdminActionKind
    target: str
    session_id: str | None
    detail: str
    at: float = 0.0


@dataclass(frozen=True, slots=True)
class NewRequest:
    """A request a door checked, to be stored (`adapters/intake/record.Arrival`, as the
    bridge's store takes it)."""

    platform: str
    workspace_id: str
    place: str
    dedupe_key: str | None
    body: str
    headers: dict[str, str]
    query: str
    verified: str


@dataclass(frozen=True, slots=True)
class StoredRequest:
    """A request from outside as its door stored it (`adapters/intake/`): the body and headers
    as they came, checked there (`verified` says how), for its platform to decode."""

    id: int
    platform: str
    workspace_id: str
    body: str
    headers: dict[str, str]
    query: str
    received_at: float
    attempts: int
    # The conversation it belongs to, as the door named it: requests of one place are
    # handled in order, places side by side ("": in order within the workspace).
    place: str = ""
    verified: str = ""
