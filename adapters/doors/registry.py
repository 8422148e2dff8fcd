"""The doors served: each platform's (its package's `door.py`), and the signed event triggers'.
Nothing else in the doors or the server names a platform.

The door process imports this and nothing else of the platforms: their config sections and
bots (`adapters/platforms.py`) load the config's models and the bridge, which would double what
its start costs. So the built-in platforms' doors are listed here too, in the order of
`adapters/platforms.py` (`tests/adapters/doors/test_door_imports.py` checks the two lists
agree); a platform registered there later (a test's) has its door added here by `register`."""

from __future__ import annotations

from adapters.hooks.door import HOOKS_DOOR
from adapters.intake.door import DoorKind
from adapters.slack.door import SLACK_DOOR
from adapters.telegram.door import TELEGRAM_DOOR

_DOORS: dict[str, DoorKind] = {}


def register(door: DoorKind) -> None:
    _DOORS[door.platform] = door


def forget(platform: str) -> None:
    _DOORS.pop(platform, None)


def kinds() -> list[DoorKind]:
    return [*_DOORS.values(), HOOKS_DOOR]


register(TELEGRAM_DOOR)
register(SLACK_DOOR)
