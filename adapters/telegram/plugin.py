"""Telegram as one platform (`adapters/platform.py`), registered in `adapters/platforms.py`.
What loads python-telegram-bot (its bots, its probe) is imported when it is used; the door
process imports its door alone (`adapters/doors/registry.py`)."""

from __future__ import annotations

from adapters.bots import PlatformKind
from adapters.platform import PageFacts, Platform, Probe
from adapters.telegram.door import TELEGRAM_DOOR
from adapters.telegram.settings import TELEGRAM_SECTION
from adapters.telegram.setup import TELEGRAM_SETUP
from config.schema import SwitchboardConfig, WorkspaceConfig


def _bots() -> PlatformKind:
    from adapters.telegram.bots import TELEGRAM_BOTS

    return TELEGRAM_BOTS


def _probes(workspace: WorkspaceConfig) -> list[Probe]:
    from adapters.telegram.probe import probes

    return probes(workspace)


def _describe(workspace: WorkspaceConfig, config: SwitchboardConfig) -> list[str]:
    return []


def _facts(workspace: WorkspaceConfig) -> list[tuple[str, str]]:
    """How its updates come: polling or webhook."""
    telegram = TELEGRAM_SECTION.of(workspace)
    return [] if telegram is None else [("Telegram", telegram.mode)]


_PAGE = PageFacts(
    facts=_facts,
    secrets=("bot_token", "webhook_secret"),
    allowed="Allowed Telegram groups (chat ids, comma-separated)",
)


TELEGRAM_PLATFORM = Platform(
    name=TELEGRAM_SECTION.name,
    section=TELEGRAM_SECTION,
    door=TELEGRAM_DOOR,
    bots=_bots,
    probes=_probes,
    describe=_describe,
    setup=TELEGRAM_SETUP,
    page=_PAGE,
)
