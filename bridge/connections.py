"""Each platform connection's health as the admin console shows it: whether it runs, its
last error, when the platform last sent something and last answered a call. The adapters'
wiring reports here through `Metrics` (the same places that set the platform gauges)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(slots=True)
class Connection:
    platform: str
    workspace_id: str
    up: bool = False
    last_error: str | None = None
    last_error_at: float | None = None  # wall time
    last_event_at: float | None = None  # a message, a button press, a command arrived
    last_ok_at: float | None = None  # a platform call succeeded


class Connections:
    def __init__(self, wall: Callable[[], float]) -> None:
        self._wall = wall
        self._by_key: dict[tuple[str, str], Connection] = {}

    def _get(self, platform: str, workspace_id: str) -> Connection:
        key = (platform, workspace_id)
        if key not in self._by_key:
            self._by_key[key] = Connection(platform, workspace_id)
        return self._by_key[key]

    def state(self, platform: str, workspace_id: str, *, up: bool) -> None:
        self._get(platform, workspace_id).up = up

    def call_ok(self, platform: str, workspace_id: str) -> None:
        self._get(platform, workspace_id).last_ok_at = self._wall()

    def call_failed(self, platform: str, workspace_id: str, error: str) -> None:
        connection = self._get(platform, workspace_id)
        connection.last_error, connection.last_error_at = error, self._wall()

    def event(self, platform: str, workspace_id: str) -> None:
        self._get(platform, workspace_id).last_event_at = self._wall()

    def of(self, workspace_id: str) -> list[Connection]:
        """A copy of the workspace's connections, by platform name."""
        return [
            dataclasses.replace(c)
            for (_, workspace), c in sorted(self._by_key.items())
            if workspace == workspace_id
        ]
