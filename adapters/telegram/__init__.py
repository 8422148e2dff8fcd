"""Telegram through python-telegram-bot: updates in by long polling or the webhook route,
replies and progress out."""

from adapters.telegram.adapter import TelegramAdapter
from adapters.telegram.front import TelegramFront
from adapters.telegram.platform import TELEGRAM
from adapters.telegram.transport import TelegramTransport

__all__ = ["TELEGRAM", "TelegramAdapter", "TelegramFront", "TelegramTransport"]
