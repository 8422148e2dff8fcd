"""The bridge's tables: migrations, typed reads, and writes inside runtime transactions."""

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
)
from bridge.store.schema import MIGRATIONS
from bridge.store.store import BridgeStore
from bridge.store.transaction import BridgeTx

__all__ = [
    "MIGRATIONS",
    "AdminActionRecord",
    "Backlog",
    "BridgeStore",
    "BridgeTx",
    "Conversation",
    "ConversationName",
    "FailedRoute",
    "Held",
    "Intent",
    "NewRequest",
    "NotificationDelivery",
    "NotificationPost",
    "NotificationRoute",
    "NotificationRouting",
    "StoredRequest",
]
