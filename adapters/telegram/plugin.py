"""Telegram as one platform (`adapters/platform.py`), registered in `adapters/platforms.py`."""

from __future__ import annotations

from adapters.bots import PlatformKind
from adapters.platform import Platform
from adapters.telegram.door import PLATFORM, TELEGRAM_DOOR


def _bots() -> PlatformKind:
    from adapters.telegram.bots import TELEGRAM_BOTS  # its SDK: in the main process only

    return TELEGRAM_BOTS


TELEGRAM_PLATFORM = Platform(PLATFORM, TELEGRAM_DOOR, _bots)
