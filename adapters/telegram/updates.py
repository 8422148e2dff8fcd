"""A stored Telegram update as python-telegram-bot's objects: its shape was checked at the
door (`shape.py`, run without PTB); one PTB still cannot read is
refused here with a log line saying why."""

from __future__ import annotations

from typing import Any, cast

from telegram import Bot, Update

from adapters.telegram import shape


def parse_update(data: object, bot: Bot | None) -> Update | str:
    """Parsed JSON as an update our handlers can act on, or what is wrong with it."""
    found = shape.problem(data)
    return found if found is not None else _built(cast(dict[str, Any], data), bot)


def _built(data: dict[str, Any], bot: Bot | None) -> Update | str:
    try:
        return Update.de_json(data, bot)
    except Exception as exc:  # parsing only, no I/O: any failure is the update's
        return f"not a Telegram update ({type(exc).__name__}: {str(exc)[:200]})"
