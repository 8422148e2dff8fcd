"""Telegram through python-telegram-bot: updates in, messages and progress out."""

from adapters.telegram.adapter import TelegramAdapter
from adapters.telegram.transport import TelegramTransport

__all__ = ["TelegramAdapter", "TelegramTransport"]
