"""The chat platforms the main process runs bots for, in the order their routes are tried (an
operator on both is notified on the first). Each platform's package has a `PlatformKind`
(`adapters/<platform>/bots.py`: its profile, and how to make one workspace's bot); its door
registers apart (`adapters/doors/registry.py`), as the door process imports only doors. A
platform added with `register` touches no bridge or server file
(`tests/adapters/test_third_platform.py`)."""

from __future__ import annotations

from adapters.bots import PlatformKind
from adapters.slack.bots import SLACK_BOTS
from adapters.telegram.bots import TELEGRAM_BOTS

_KINDS: dict[str, PlatformKind] = {kind.name: kind for kind in (TELEGRAM_BOTS, SLACK_BOTS)}


def register(kind: PlatformKind) -> None:
    _KINDS[kind.name] = kind


def kinds() -> list[PlatformKind]:
    return list(_KINDS.values())
