"""`POST /telegram/{workspace_id}`: the HTTP door of every Telegram bot in webhook mode. The
request must carry the workspace's secret token (403 otherwise), and the update is stored
before Telegram gets its 200.

python-telegram-bot takes an update's field types on trust: a body that is not JSON, or a
field of a type Telegram never sends, would make it (or our handlers) raise. So the body is
checked here first, and one that is no Telegram update is refused with 400 and a log line
saying what is wrong with it. A good update the store fails to take is a 500, so that
Telegram sends it again."""

from __future__ import annotations

import hmac
import json
import logging
from collections.abc import Iterable

from aiohttp import web
from telegram import Bot, Update

from adapters.telegram.adapter import TelegramAdapter
from bridge.forwarding import Forwarding, NotReady
from bridge.store import Forwarded

log = logging.getLogger(__name__)

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
_JSON_NAMES = {list: "a list", str: "a string", bool: "a boolean", type(None): "null"}


class TelegramFront:
    def __init__(self, adapters: Iterable[TelegramAdapter]) -> None:
        self._bots = {a.workspace.id: a for a in adapters}
        # Set while this replica is a standby: checked updates are stored for the active one.
        self.forwarding: Forwarding | None = None

    def update(self, adapters: Iterable[TelegramAdapter]) -> None:
        """The workspaces' adapters after a reload."""
        self._bots = {a.workspace.id: a for a in adapters}

    async def handle(self, request: web.Request) -> web.Response:
        workspace = request.match_info["workspace_id"]
        adapter = self._bots.get(workspace)
        if adapter is None or adapter.settings.mode != "webhook":
            raise web.HTTPNotFound(text="no Telegram webhook for this workspace")
        expected = adapter.settings.webhook_secret
        # As bytes: the header may hold any character, and compare_digest takes only ASCII text.
        given = request.headers.get(SECRET_HEADER, "").encode("utf-8", "surrogateescape")
        if expected is None or not hmac.compare_digest(given, expected.get_secret_value().encode()):
            raise web.HTTPForbidden(text="wrong secret token")
        if not adapter.application.running and self.forwarding is None:
            # restarting, or not started: Telegram sends it again
            raise web.HTTPServiceUnavailable(text="the bot is not running; send it again later")
        raw = await request.read()
        try:
            data = json.loads(raw.decode("utf-8"))
        except (ValueError, RecursionError) as exc:  # not UTF-8, not JSON, nested too deeply
            return _refused(workspace, raw, f"the body is not JSON ({exc})")
        update = parse_update(data, adapter.application.bot)
        if isinstance(update, str):
            return _refused(workspace, raw, update)
        if self.forwarding is not None:  # a store that fails raises: a 500, Telegram resends
            await self.forwarding.forward(
                "telegram", workspace, str(update.update_id), raw.decode("utf-8"), {}
            )
            return web.Response(text="ok")
        try:
            await adapter.feed(update)  # stored before Telegram gets its 200
        except Exception:  # the update is good, but was not stored: let Telegram resend it
            log.exception("telegram update not stored", extra={"workspace": workspace})
            raise web.HTTPInternalServerError(text="update not stored") from None
        return web.Response(text="ok")

    async def replay(self, request: Forwarded) -> None:
        """An update a standby replica checked and stored, handled here as if it had just
        come in."""
        adapter = self._bots.get(request.workspace_id)
        if adapter is None or adapter.settings.mode != "webhook":
            log.warning(
                "forwarded telegram update for a webhook no longer served; dropped",
                extra={"workspace": request.workspace_id},
            )
            return
        if not adapter.application.running:
            raise NotReady(f"workspace {request.workspace_id}'s bot is not running")
        update = parse_update(json.loads(request.body), adapter.application.bot)
        if isinstance(update, str):  # checked before it was stored: cannot happen
            log.error("forwarded telegram update malformed; dropped", extra={"reason": update})
            return
        await adapter.feed(update)


def parse_update(data: object, bot: Bot) -> Update | str:
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


def _refused(workspace: str, raw: bytes, reason: str) -> web.Response:
    """A body that is no Telegram update: 400, and a log line saying what is wrong with it."""
    log.warning(
        "telegram update refused",
        extra={"workspace": workspace, "reason": reason, "body_bytes": len(raw)},
    )
    return web.Response(status=400, text=reason)
