"""Between chat platforms and the runtime: trust, commands, sessions, routing, delivery."""

from bridge.assembly import build_provider, open_runtime
from bridge.ingress import Outcome
from bridge.service import Bridge
from bridge.transport import DeliveryError, ProgressView, Transport
from bridge.types import DeliveryKind, InboundChat, Platform, Route, TransportLimits

__all__ = [
    "Bridge",
    "DeliveryError",
    "DeliveryKind",
    "InboundChat",
    "Outcome",
    "Platform",
    "ProgressView",
    "Route",
    "Transport",
    "TransportLimits",
    "build_provider",
    "open_runtime",
]
