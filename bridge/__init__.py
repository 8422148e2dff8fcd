"""Between chat platforms and the runtime: trust, commands, sessions, routing, delivery."""

from bridge.attachments.source import FetchError, FileSource
from bridge.commands import menu as command_menu
from bridge.platform import PlatformProfile
from bridge.platforms import Platforms
from bridge.service import Bridge
from bridge.transport import DeliveryError, ProgressView, Transport
from bridge.types import (
    Button,
    DeliveryKind,
    FileKind,
    InboundChat,
    InboundFile,
    Quoted,
    Route,
    TransportLimits,
    Via,
    button_rows,
)
from bridge.verdicts import Outcome
from runtime.tasks import cancel_and_wait

__all__ = [
    "Bridge",
    "Button",
    "DeliveryError",
    "DeliveryKind",
    "FetchError",
    "FileKind",
    "FileSource",
    "InboundChat",
    "InboundFile",
    "Outcome",
    "PlatformProfile",
    "Platforms",
    "ProgressView",
    "Quoted",
    "Route",
    "Transport",
    "TransportLimits",
    "Via",
    "button_rows",
    "cancel_and_wait",
    "command_menu",
]
