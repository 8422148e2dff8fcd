"""The admin console's view of the bridge: typed reads of a workspace, its live feed, and the
actions an admin steers it with. No HTTP here: `adapters/admin/` serves the pages."""

from bridge.admin.board import Board, Failure, Ref, Waiting, read_board
from bridge.admin.errors import NotInWorkspace, NotPossible
from bridge.admin.history import History
from bridge.admin.live import Live, SessionPage, live_boards, live_session, live_sessions
from bridge.admin.memory import MemoryBoard, export_memory, forget_memory, read_memory
from bridge.admin.providers import ProvidersBoard, read_providers
from bridge.admin.records import (
    AuditEntry,
    ConnectionRow,
    DeliveryRow,
    Overview,
    Paged,
    SessionDetail,
    SessionRow,
    TurnView,
)
from bridge.admin.schedules import ScheduleBoard, ScheduleSteering, read_schedules
from bridge.admin.steer import Steering
from bridge.admin.usage import HeldTurn, UsageBoard, approve_spend, read_usage
from bridge.admin.view import AdminView
from runtime import QueueMode  # what `Steering.set_queue_mode` takes

__all__ = [
    "AdminView",
    "AuditEntry",
    "Board",
    "ConnectionRow",
    "DeliveryRow",
    "Failure",
    "HeldTurn",
    "History",
    "Live",
    "MemoryBoard",
    "NotInWorkspace",
    "NotPossible",
    "Overview",
    "Paged",
    "ProvidersBoard",
    "QueueMode",
    "Ref",
    "ScheduleBoard",
    "ScheduleSteering",
    "SessionDetail",
    "SessionPage",
    "SessionRow",
    "Steering",
    "TurnView",
    "UsageBoard",
    "Waiting",
    "approve_spend",
    "export_memory",
    "forget_memory",
    "live_boards",
    "live_session",
    "live_sessions",
    "read_board",
    "read_memory",
    "read_providers",
    "read_schedules",
    "read_usage",
]
