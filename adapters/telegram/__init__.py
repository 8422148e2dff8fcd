"""Telegram through python-telegram-bot: the updates the doors stored in, replies and progress
out."""

from adapters.telegram.adapter import TelegramAdapter
from adapters.telegram.decoder import TelegramDecoder
from adapters.telegram.platform import TELEGRAM
from adapters.telegram.transport import TelegramTransport

__all__ = ["TELEGRAM", "TelegramAdapter", "TelegramDecoder", "TelegramTransport"]
