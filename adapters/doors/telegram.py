"""The checks every request to `POST /telegram/{workspace_id}` passes before anything acts on
it, in the door process (`adapters/doors/process.py`) or in the Telegram front: the
workspace's secret token (403 otherwise), and a body that is a Telegram update.

python-telegram-bot takes an update's field types on trust: a body that is not JSON, or a
field of a type Telegram never sends, would make it (or our handlers) raise. So the body is
checked first, and one that is no Telegram update is refused with 400 and a log line saying
what is wrong with it."""

from __future__ import annotations

import hmac
import json
import logging

from aiohttp import web
from telegram import Bot, Update

log = logging.getLogger(__name__)

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
_JSON_NAMES = {list: "a list", str: "a string", bool: "a boolean", type(None): "null"}


def secret_matches(request: web.Request, expected: str | None) -> bool:
    """The request carries the webhook's secret token."""
    # As bytes: the header may hold any character, and compare_digest takes only ASCII text.
    given = request.headers.get(SECRET_HEADER, "").encode("utf-8", "surrogateescape")
    return expected is not None and hmac.compare_digest(given, expected.encode())


def check(workspace: str, raw: bytes, bot: Bot | None) -> Update | web.Response:
    """The body as an update our handlers can act on, or the 400 refusing it."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as exc:  # not UTF-8, not JSON, nested too deeply
        return refused(workspace, raw, f"the body is not JSON ({exc})")
    update = parse_update(data, bot)
    if isinstance(update, str):
        return refused(workspace, raw, update)
    return update


def place(update: Update) -> str:
    """The conversation an update belongs to (a chat, a forum topic), as
    `adapters/telegram/inbound.py` makes sessions: updates of one place are handled in the
    order they came, different places side by side."""
    message = update.effective_message
    if message is None:
        return ""
    thread = message.message_thread_id if message.is_topic_message else None
    return f"{message.chat.id}:{thread or ''}"


def parse_update(data: object, bot: Bot | None) -> Update | str:
    """Parsed JSON as an update our handlers can act on, or what is wrong with it."""
    if not isinstance(data, dict):
        return f"an update is a JSON object, not {_JSON_NAMES.get(type(data), 'a number')}"
    if type(data.get("update_id")) is not int:
        return "`update_id` is missing or not an integer"
    try:
        update = Update.de_json(data, bot)
    except Exception as exc:  # parsing only, no I/O: any failure is the update's
        return f"not a Telegram update ({type(exc).__name__}: {str(exc)[:200]})"
    return _malformed_fields(update) or update


def _malformed_fields(update: Update) -> str | None:
    """The first field our handlers read whose type Telegram never sends there."""
    query = update.callback_query
    text, maybe_text, maybe_int = (str,), (str, type(None)), (int, type(None))
    fields: list[tuple[str, object, tuple[type, ...]]] = []
    if query is not None:
        fields += [
            ("callback_query.id", query.id, text),
            ("callback_query.data", query.data, maybe_text),
            ("callback_query.from.id", getattr(query.from_user, "id", None), (int,)),
        ]
    for path, message in (
        ("message", update.message),
        ("callback_query.message", query.message if query else None),
    ):
        if message is None:
            continue
        fields += [
            (f"{path}.message_id", message.message_id, (int,)),
            (f"{path}.chat.id", getattr(message.chat, "id", None), (int,)),
            (f"{path}.text", getattr(message, "text", None), maybe_text),
            (f"{path}.message_thread_id", getattr(message, "message_thread_id", 0), maybe_int),
        ]
        sender = getattr(message, "from_user", None)
        if sender is not None:
            fields += [
                (f"{path}.from.id", sender.id, (int,)),
                (f"{path}.from.first_name", sender.first_name, text),
                (f"{path}.from.last_name", sender.last_name, maybe_text),
            ]
    for path, value, kinds in fields:
        if not isinstance(value, kinds) or isinstance(value, bool):
            expected = " or ".join("null" if k is type(None) else k.__name__ for k in kinds)
            return f"`{path}` is {type(value).__name__}, not {expected}"
    return None


def refused(workspace: str, raw: bytes, reason: str) -> web.Response:
    """A body that is no Telegram update: 400, and a log line saying what is wrong with it."""
    log.warning(
        "telegram update refused",
        extra={"workspace": workspace, "reason": reason, "body_bytes": len(raw)},
    )
    return web.Response(status=400, text=reason)
