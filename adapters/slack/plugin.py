"""Slack as one platform (`adapters/platform.py`), registered in `adapters/platforms.py`."""

from __future__ import annotations

from adapters.bots import PlatformKind
from adapters.platform import Platform
from adapters.slack.door import PLATFORM, SLACK_DOOR


def _bots() -> PlatformKind:
    from adapters.slack.bots import SLACK_BOTS  # its SDK: in the main process only

    return SLACK_BOTS


SLACK_PLATFORM = Platform(PLATFORM, SLACK_DOOR, _bots)
