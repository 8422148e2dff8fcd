"""What an adapter provides to the bridge: sending, progress, and its limits as data."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from bridge.types import DeliveryKind, Platform, Route, TransportLimits
from config.errors import SwitchboardError


class DeliveryError(SwitchboardError):
    """A send failed. `landed` says whether the platform may have accepted it anyway: only
    a send that certainly did not land ("no") is ever retried."""

    def __init__(
        self,
        message: str,
        *,
        retryable: bool,
        landed: Literal["no", "unknown"] = "no",
        retry_after: float | None = None,
        route_gone: bool = False,
    ) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.landed = landed
        self.retry_after = retry_after
        self.route_gone = route_gone  # the bot was blocked or removed: stop using this route


@dataclass(frozen=True, slots=True)
class ProgressView:
    run_id: str
    step: str
    elapsed_s: float
    note: str | None = None  # a one-off line, e.g. "your message reached the agent ..."


class Transport(Protocol):
    platform: Platform
    limits: TransportLimits

    async def send(
        self, route: Route, text: str, *, kind: DeliveryKind, intent_id: str, chunk: int
    ) -> None:
        """Post one rendered chunk. Raises DeliveryError when it did not work."""

    async def show_progress(self, route: Route, view: ProgressView | None) -> None:
        """Show (or, with None, clear) the live state of a running turn. Best effort."""

    async def delivered(self, route: Route, intent_id: str, chunk: int) -> bool | None:
        """Did this chunk of this intent land? Asked before re-sending one whose outcome is
        unknown (a timeout, a crash mid-send). None: this platform cannot tell."""
