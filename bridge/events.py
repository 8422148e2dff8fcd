"""The bridge's own audit events, in the same ledger as the runtime's (DESIGN §3)."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, ClassVar

from bridge.types import DeliveryKind
from runtime.events import Payload


class BridgeEventType(StrEnum):
    INBOUND_REFUSED = "inbound_refused"
    INBOUND_REJECTED = "inbound_rejected"
    INBOUND_TRUNCATED = "inbound_truncated"
    INBOUND_IGNORED = "inbound_ignored"
    INBOUND_FILES_HELD = "inbound_files_held"
    INBOUND_FILES_SKIPPED = "inbound_files_skipped"
    NOTIFICATION_UNROUTABLE = "notification_unroutable"
    OUTPUT_UNROUTABLE = "output_unroutable"
    ROUTE_FAILED = "route_failed"
    DELIVERY_ACCEPTED = "delivery_accepted"
    DELIVERY_FAILED = "delivery_failed"
    DELIVERY_QUEUED = "delivery_queued"
    ADMIN_ACTION = "admin_action"
    REQUEST_FORWARDED = "request_forwarded"
    PAIRING_DECIDED = "pairing_decided"


class AdminActionKind(StrEnum):
    """What an admin did from the console."""

    STOP_TURN = "stop_turn"
    SET_QUEUE_MODE = "set_queue_mode"
    RETRY_DELIVERY = "retry_delivery"
    DISCARD_DELIVERY = "discard_delivery"
    REROUTE_NOTIFICATION = "reroute_notification"
    EDIT_CONFIG = "edit_config"  # a workspace's settings, from the console
    RELOAD_CONFIG = "reload_config"  # the whole file read again, from the console
    PAUSE_SCHEDULE = "pause_schedule"
    RESUME_SCHEDULE = "resume_schedule"
    RUN_SCHEDULE = "run_schedule"  # once, now
    CANCEL_WAKEUP = "cancel_wakeup"  # a wake-up an agent set
    APPROVE_SPEND = "approve_spend"  # a turn a budget held goes on (that turn only)
    FORGET_MEMORY = "forget_memory"  # one of an agent's memories, of any scope


class InboundRefused(Payload):
    """A message from someone who is not an operator here (or not in this conversation)."""

    TYPE: ClassVar[str] = BridgeEventType.INBOUND_REFUSED
    platform: str
    workspace_id: str
    sender_id: str
    conversation_id: str
    reason: str
    replied: bool


class InboundRejected(Payload):
    """An operator's message with nothing to pass on (empty, or not text)."""

    TYPE: ClassVar[str] = BridgeEventType.INBOUND_REJECTED
    platform: str
    workspace_id: str
    sender_id: str
    reason: str


class InboundIgnored(Payload):
    """A group or channel message not addressed to the bot the way the admin asks
    (`respond_to`), or a stranger's chatter there: recorded, not answered."""

    TYPE: ClassVar[str] = BridgeEventType.INBOUND_IGNORED
    platform: str
    workspace_id: str
    sender_id: str
    conversation_id: str
    reason: str


class InboundTruncated(Payload):
    TYPE: ClassVar[str] = BridgeEventType.INBOUND_TRUNCATED
    message_id: str
    length: int


class InboundFilesHeld(Payload):
    """An operator's message with files, stored until its files are downloaded."""

    TYPE: ClassVar[str] = BridgeEventType.INBOUND_FILES_HELD
    pending_id: str
    platform: str
    workspace_id: str
    files: int


class InboundFilesSkipped(Payload):
    """Files of an operator's message not passed to the agent, each with why (said to them)."""

    TYPE: ClassVar[str] = BridgeEventType.INBOUND_FILES_SKIPPED
    pending_id: str
    skipped: list[str]


class NotificationUnroutable(Payload):
    TYPE: ClassVar[str] = BridgeEventType.NOTIFICATION_UNROUTABLE
    notification_id: str
    summary: str


class OutputUnroutable(Payload):
    """A turn's answer or a drop notice with no route: kept here, listed by /status."""

    TYPE: ClassVar[str] = BridgeEventType.OUTPUT_UNROUTABLE
    kind: DeliveryKind
    event_seq: int | None
    text: str


class RouteFailed(Payload):
    """The platform refused a conversation for good (the bot was blocked or removed)."""

    TYPE: ClassVar[str] = BridgeEventType.ROUTE_FAILED
    route: dict[str, Any]
    reason: str | None


class DeliveryAccepted(Payload):
    TYPE: ClassVar[str] = BridgeEventType.DELIVERY_ACCEPTED
    delivery_id: str
    kind: DeliveryKind
    route: dict[str, Any]
    error: str | None = None


class DeliveryFailed(Payload):
    TYPE: ClassVar[str] = BridgeEventType.DELIVERY_FAILED
    delivery_id: str
    kind: DeliveryKind
    route: dict[str, Any]
    error: str | None


class DeliveryQueued(Payload):
    """Replicas: something to send was stored for a workspace another replica serves; its
    outbox there sends it at once (a hint: it would find it within seconds anyway)."""

    TYPE: ClassVar[str] = BridgeEventType.DELIVERY_QUEUED
    HINT: ClassVar[bool] = True
    workspace_id: str
    conversation_key: str


class AdminAction(Payload):
    """An admin steered a workspace from the console: who, what, on which object (a run, a
    session, a delivery, a notification), and what came of it. Written with the record
    `admin_actions` keeps for the workspace's audit list."""

    TYPE: ClassVar[str] = BridgeEventType.ADMIN_ACTION
    admin: str  # `Admin.label`: "admin", or "<workspace>/<admin id>"
    action: AdminActionKind
    workspace_id: str
    target: str
    detail: str


class RequestForwarded(Payload):
    """A standby replica took a platform's request (verified, not yet handled) and stored it
    for the active replica, which handles it as if it had come in there."""

    TYPE: ClassVar[str] = BridgeEventType.REQUEST_FORWARDED
    HINT: ClassVar[bool] = True  # the replica that replays wakes at once
    platform: str
    workspace_id: str


class PairingDecided(Payload):
    """A pairing request was approved or denied, or a paired sender revoked, and by whom (an
    operator's id, or `cli (<user>)`, or a console admin). The code is not in it."""

    TYPE: ClassVar[str] = BridgeEventType.PAIRING_DECIDED
    workspace_id: str
    platform: str
    sender_id: str
    status: str
    decided_by: str
