"""The platforms whose doors are served: one `DoorKind` each, from its own package. Another
platform registers its own kind; nothing else in the doors or the server names a platform."""

from __future__ import annotations

from adapters.hooks.door import HOOKS_DOOR
from adapters.intake.door import DoorKind
from adapters.slack.door import SLACK_DOOR
from adapters.telegram.door import TELEGRAM_DOOR

_KINDS: dict[str, DoorKind] = {
    kind.platform: kind for kind in (SLACK_DOOR, TELEGRAM_DOOR, HOOKS_DOOR)
}


def register(kind: DoorKind) -> None:
    _KINDS[kind.platform] = kind


def kinds() -> list[DoorKind]:
    return list(_KINDS.values())
