"""Telegram's ways in. `POST /telegram/{workspace_id}`, a bot's webhook: the workspace's secret
token (403 otherwise) and a body shaped as an update (400 otherwise: `verify.py`), then the
update is stored and answered. And long polling (`polling.py`) for the bots in polling mode,
each batch stored before the next getUpdates confirms it."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

from aiohttp import web

from adapters.intake.door import DoorKind, Failed, Poll, Store
from adapters.intake.record import Arrival, Put
from adapters.telegram import shape
from adapters.telegram.polling import Poller, PollingKey
from adapters.telegram.verify import checked_json, secret_matches

if TYPE_CHECKING:
    from config.schema import SwitchboardConfig

PLATFORM = "telegram"  # `TELEGRAM.name`, without loading the profile's markup here
VERIFIED = "telegram secret token"


def keys(config: SwitchboardConfig) -> Any:
    """Each webhook's secret token; each polling bot's token and API."""
    # The config's models: the main process's, which alone calls this (not the door process).
    from adapters.telegram.settings import TELEGRAM_SECTION

    bots = {w.id: bot for w in config.workspaces if (bot := TELEGRAM_SECTION.of(w)) is not None}
    webhooks = {
        workspace: secret.get_secret_value()
        for workspace, bot in bots.items()
        if bot.mode == "webhook" and (secret := bot.webhook_secret) is not None
    }
    polling = [
        {"workspace": workspace, "token": bot.bot_token.get_secret_value(), "api": bot.api_base_url}
        for workspace, bot in bots.items()
        if bot.mode == "polling"
    ]
    return {"webhooks": webhooks, "polling": polling} if webhooks or polling else None


class TelegramDoor:
    def __init__(self, put: Put, failed: Failed) -> None:
        self._put = put
        self._failed = failed
        self._webhooks: dict[str, str] = {}  # workspace id -> secret token
        self._polling: list[PollingKey] = []

    def update(self, keys: Any) -> None:
        keys = keys or {"webhooks": {}, "polling": []}
        self._webhooks = dict(keys["webhooks"])
        self._polling = [PollingKey(k["workspace"], k["token"], k["api"]) for k in keys["polling"]]

    def route(self, app: web.Application, store: Store) -> None:
        app.router.add_post("/telegram/{workspace_id}", partial(self._webhook, store))

    def pollers(self) -> Mapping[tuple[str, Hashable], Poll]:
        return {
            (key.workspace_id, key): Poller(key, self._put, self._failed).run
            for key in self._polling
        }

    async def _webhook(self, store: Store, request: web.Request) -> web.Response:
        workspace = request.match_info["workspace_id"]
        secret = self._webhooks.get(workspace)
        if secret is None:
            raise web.HTTPNotFound(text="no Telegram webhook for this workspace")
        if not secret_matches(request, secret):
            raise web.HTTPForbidden(text="wrong secret token")
        raw = await request.read()
        update = checked_json(workspace, raw)
        if isinstance(update, web.Response):
            return update
        where = shape.place(update)
        key = str(update["update_id"])
        await store(Arrival(PLATFORM, workspace, where, key, raw.decode(), VERIFIED))
        return web.Response(text="ok")


TELEGRAM_DOOR = DoorKind(PLATFORM, keys, TelegramDoor)
