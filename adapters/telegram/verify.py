"""The checks every request to `POST /telegram/{workspace_id}` passes before it is stored
(`door.py`, in the door process or the main one): the workspace's secret token (403
otherwise), and a body that is a Telegram update.

python-telegram-bot takes an update's field types on trust: a body that is not JSON, or a
field of a type Telegram never sends, would make it (or our handlers) raise. So the body is
checked first, and one that is no Telegram update is refused with 400 and a log line saying
what is wrong with it. PTB's objects are built only when the stored update is decoded
(`updates.py`): one that passes the door but not PTB is refused there, with a log line."""

from __future__ import annotations

import hmac
import json
import logging
from typing import Any, cast

from aiohttp import web

from adapters.telegram import shape

log = logging.getLogger(__name__)

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"


def secret_matches(request: web.Request, expected: str | None) -> bool:
    """The request carries the webhook's secret token."""
    # As bytes: the header may hold any character, and compare_digest takes only ASCII text.
    given = request.headers.get(SECRET_HEADER, "").encode("utf-8", "surrogateescape")
    if not expected:  # an empty secret would match a request without the header
        return False
    return hmac.compare_digest(given, expected.encode())


def checked_json(workspace: str, raw: bytes) -> dict[str, Any] | web.Response:
    """The body parsed, if it has a Telegram update's shape (`shape.py`), or the 400
    refusing it. The door process checks only this; python-telegram-bot's objects are built
    where the update is handled."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as exc:  # not UTF-8, not JSON, nested too deeply
        return refused(workspace, raw, f"the body is not JSON ({exc})")
    found = shape.problem(data)
    if found is not None:
        return refused(workspace, raw, found)
    return cast(dict[str, Any], data)


def refused(workspace: str, raw: bytes, reason: str) -> web.Response:
    """A body that is no Telegram update: 400, and a log line saying what is wrong with it."""
    log.warning(
        "telegram update refused",
        extra={"workspace": workspace, "reason": reason, "body_bytes": len(raw)},
    )
    return web.Response(status=400, text=reason)
