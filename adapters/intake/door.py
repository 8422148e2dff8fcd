"""What a platform's door is: what only the platform knows of its ways in (the requests it
takes, how it checks them, what it polls), in one shape that the doors
(`adapters/doors/doors.py`) and the door process use without naming any platform. Each
platform's package has one (`door.py`), listed in `adapters/doors/registry.py`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine, Hashable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from aiohttp import web
from prometheus_client import CollectorRegistry

from adapters.intake.record import Arrival, Put

if TYPE_CHECKING:  # a type only: the door process builds no config model
    from config.schema import SwitchboardConfig

Store = Callable[[Arrival], Awaitable[bool]]
"""Store a checked request; False: a copy with its platform id is stored already (a retry). A
failure is raised as a 500, so the platform sends it again."""
MAX_REQUEST_BYTES = 4 * 1024 * 1024
"""The largest body a door reads (a trigger's `max_body_bytes` may go up to it), on every
topology."""
Failed = Callable[[str, str], None]
"""A poll that failed (the workspace, what went wrong): for the log and the console."""
Poll = Callable[[], Coroutine[Any, Any, None]]
DOOR_METRICS = web.AppKey("door_metrics", CollectorRegistry)
"""What the doors routed on an app count (the hooks' refusals), for that port's `/metrics`:
served after the process's own by the main process (inline, replicas) or added by the door
process to what it passes on."""


def door_metrics(app: web.Application) -> CollectorRegistry:
    """The registry of what the doors routed on `app` count (made on first use)."""
    if DOOR_METRICS not in app:
        app[DOOR_METRICS] = CollectorRegistry(auto_describe=True)
    return app[DOOR_METRICS]


class Door(Protocol):
    def route(self, app: web.Application, store: Store) -> None:
        """Add its HTTP routes: each checks a request, `store`s it, then answers."""
        ...

    def update(self, keys: Any) -> None:
        """The keys (its `DoorKind.keys`) of the config just applied; None: it has none."""
        ...

    def pollers(self) -> Mapping[tuple[str, Hashable], Poll]:
        """What it polls now, each by its workspace and a key that changes when what it
        polls does."""
        ...


@dataclass(frozen=True, slots=True)
class DoorKind:
    platform: str
    keys: Callable[[SwitchboardConfig], Any]
    """What its door checks with, from the config, as JSON (it goes to the door process);
    None when the config gives it nothing to serve. Secrets included: never logged."""
    door: Callable[[Put, Failed], Door]
