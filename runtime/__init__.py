"""The embeddable agent runtime: sessions, queues, turns with safe points, tools, store.

It knows nothing of Slack or Telegram; the bridge drives it through `Runtime`.
"""

from runtime.agents import AgentSpec
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
from runtime.records import AgentProfile, OperatorBoundary, RunStatus, ToolStatus
from runtime.results import RuntimeSettings, SessionStatus, StopResult, SubmitResult
from runtime.tools import CommandToolSpec, ToolResult
from runtime.turn import Boundary

__all__ = [
    "AgentProfile",
    "AgentSpec",
    "Boundary",
    "Clock",
    "CommandToolSpec",
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
    "SessionStatus",
    "StaleRunError",
    "StopResult",
    "SubmitResult",
    "SystemClock",
    "ToolResult",
    "ToolStatus",
    "TranscriptInvariantError",
    "Trust",
    "UnknownRunError",
    "UnknownSessionError",
]
