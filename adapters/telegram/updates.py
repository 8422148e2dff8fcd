"""A Telegram update as python-telegram-bot's objects, for the fronts that handle it: the body
checked first (`adapters/doors/telegram.py`, which the door process runs without PTB), then
built; one PTB cannot read is refused with the same 400 and log line."""

from __future__ import annotations

from typing import Any, cast

from aiohttp import web
from telegram import Bot, Update

from adapters.doors import telegram_shape
from adapters.doors.telegram import checked_json, refused


def check(workspace: str, raw: bytes, bot: Bot | None) -> Update | web.Response:
    """The body as an update our handlers can act on, or the 400 refusing it."""
    data = checked_json(workspace, raw)
    if isinstance(data, web.Response):
        return data
    update = _built(data, bot)
    if isinstance(update, str):
        return refused(workspace, raw, update)
    return update


def parse_update(data: object, bot: Bot | None) -> Update | str:
    """Parsed JSON as an update our handlers can act on, or what is wrong with it."""
    found = telegram_shape.problem(data)
    return found if found is not None else _built(cast(dict[str, Any], data), bot)


def _built(data: dict[str, Any], bot: Bot | None) -> Update | str:
    try:
        return Update.de_json(data, bot)
    except Exception as exc:  # parsing only, no I/O: any failure is the update's
        return f"not a Telegram update ({type(exc).__name__}: {str(exc)[:200]})"
