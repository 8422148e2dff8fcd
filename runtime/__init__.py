"""The embeddable agent runtime: sessions, queues, turns with safe points, tools, store.

It knows nothing of Slack or Telegram; the bridge drives it through `Runtime`.
"""

from runtime.agents import AgentSpec, WakeupLimits
from runtime.boundaries import Boundary
from runtime.clock import Clock, ManualClock, SystemClock
from runtime.engine import Runtime
from runtime.errors import (
    ProviderError,
    RuntimeFault,
    StaleRunError,
    TranscriptInvariantError,
    UnknownRunError,
    UnknownSessionError,
)
from runtime.events import Event, EventType
from runtime.messages import (
    DropPolicy,
    InboundMessage,
    MessageKind,
    Origin,
    Priority,
    Provenance,
    QueueMode,
    QueueStatus,
    Trust,
)
from runtime.records import AgentProfile, OperatorBoundary, RunStatus
from runtime.results import (
    CompactStatus,
    RuntimeSettings,
    SessionState,
    SessionStatus,
    StopResult,
    StopStatus,
    SubmitResult,
)
from runtime.scheduler import SubmitStatus
from runtime.tools import CommandToolSpec, ToolResult, ToolStatus

__all__ = [
    "AgentProfile",
    "AgentSpec",
    "Boundary",
    "Clock",
    "CommandToolSpec",
    "CompactStatus",
    "DropPolicy",
    "Event",
    "EventType",
    "InboundMessage",
    "ManualClock",
    "MessageKind",
    "OperatorBoundary",
    "Origin",
    "Priority",
    "Provenance",
    "ProviderError",
    "QueueMode",
    "QueueStatus",
    "RunStatus",
    "Runtime",
    "RuntimeFault",
    "RuntimeSettings",
    "SessionState",
    "SessionStatus",
    "StaleRunError",
    "StopResult",
    "StopStatus",
    "SubmitResult",
    "SubmitStatus",
    "SystemClock",
    "ToolResult",
    "ToolStatus",
    "TranscriptInvariantError",
    "Trust",
    "UnknownRunError",
    "UnknownSessionError",
    "WakeupLimits",
]
