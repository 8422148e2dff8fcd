"""The platforms the bridge runs: by name, in the order their transports were attached, each
with its profile and the one pacer every call to it passes (the outbox's replies, progress,
a thread read, a reaction on receipt all share it). The bridge's service owns the registry
and hands it to each part that sends or needs a platform's facts."""

from __future__ import annotations

from bridge.platform import PlatformProfile
from bridge.ratelimit import ProgressBudget, RateLimiter
from bridge.transport import Transport
from bridge.types import Route
from runtime.clock import Clock


class Platforms:
    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._transports: dict[str, Transport] = {}
        self._pacers: dict[str, RateLimiter] = {}

    def attach(self, transport: Transport) -> None:
        """Send through `transport` for its profile's platform (a second one replaces the
        first, with a fresh pacer)."""
        profile = transport.profile
        self._transports[profile.name] = transport
        self._pacers[profile.name] = RateLimiter(self._clock, profile.limits)

    def names(self) -> list[str]:
        """The running platforms, in the order they were attached."""
        return list(self._transports)

    def transport(self, platform: str) -> Transport | None:
        return self._transports.get(platform)

    def profile(self, platform: str) -> PlatformProfile | None:
        """The platform's facts, or None when no adapter for it runs."""
        transport = self._transports.get(platform)
        return transport.profile if transport is not None else None

    def pacer(self, platform: str) -> RateLimiter:
        """The pacer of a running platform (KeyError: it does not run)."""
        return self._pacers[platform]

    def budget(self, route: Route) -> ProgressBudget:
        """Room for best-effort calls on `route` (progress, a reaction): unlimited where no
        adapter runs for its platform."""
        return ProgressBudget(self._pacers.get(route.platform), route)
