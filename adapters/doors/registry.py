"""The doors served: each platform's (`adapters/platforms.py`), and the signed event triggers'.
Nothing else in the doors or the server names a platform."""

from __future__ import annotations

from adapters.hooks.door import HOOKS_DOOR
from adapters.intake.door import DoorKind
from adapters.platforms import platforms


def kinds() -> list[DoorKind]:
    return [*(platform.door for platform in platforms()), HOOKS_DOOR]
