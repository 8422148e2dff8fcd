"""Telegram's bots, as the main process runs them (`plugin.py` loads them)."""

from __future__ import annotations

from adapters.bots import PlatformKind
from adapters.intake.record import Put
from adapters.telegram.adapter import TelegramAdapter
from adapters.telegram.files import TelegramFiles
from adapters.telegram.platform import TELEGRAM
from bridge.service import Bridge
from config.schema import WorkspaceConfig


def _bot(bridge: Bridge, workspace: WorkspaceConfig, put: Put) -> TelegramAdapter:
    return TelegramAdapter(bridge, workspace)  # its updates come in through its door


TELEGRAM_BOTS = PlatformKind(TELEGRAM, _bot, TelegramFiles.max_bytes)
