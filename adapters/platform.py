"""A chat platform as one object: everything only it knows, from its own package, registered
once (`adapters/platforms.py`). The door process, the main process, the config, `init`,
`check-config` and the console take what they need of it and never name a platform.

Its door is imported with it (the door process uses nothing else); its bots, which load the
platform's SDK, only when the main process runs them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from adapters.bots import PlatformKind
from adapters.intake.door import DoorKind


@dataclass(frozen=True, slots=True)
class Platform:
    name: str
    door: DoorKind
    bots: Callable[[], PlatformKind]
    """Its profile and how to make one workspace's bot: loaded when called."""
