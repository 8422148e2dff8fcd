"""`POST /telegram/{workspace_id}`: the HTTP door of every Telegram bot in webhook mode. The
request must carry the workspace's secret token (403 otherwise) and be an update (400
otherwise; `adapters/doors/telegram.py` checks both), and the update is stored before
Telegram gets its 200. A good update the store fails to take is a 500, so that Telegram sends
it again.

With the door process (`adapters/doors/`), the same checks run there and the update reaches
this front later, through `replay`."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable

from aiohttp import web

from adapters.doors.telegram import secret_matches
from adapters.telegram.adapter import TelegramAdapter
from adapters.telegram.updates import check, parse_update
from bridge.forwarding import Forwarding, NotReady
from bridge.store import Forwarded

log = logging.getLogger(__name__)


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
        secret = adapter.settings.webhook_secret
        if not secret_matches(request, secret.get_secret_value() if secret else None):
            raise web.HTTPForbidden(text="wrong secret token")
        if not adapter.application.running and self.forwarding is None:
            # restarting, or not started: Telegram sends it again
            raise web.HTTPServiceUnavailable(text="the bot is not running; send it again later")
        raw = await request.read()
        update = check(workspace, raw, adapter.application.bot)
        if isinstance(update, web.Response):
            return update
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
        """An update a standby replica or the door process checked and stored (a webhook's,
        or one the door process polled), handled here as if it had just come in."""
        adapter = self._bots.get(request.workspace_id)
        if adapter is None:
            log.warning(
                "stored telegram update for a bot no longer served; dropped",
                extra={"workspace": request.workspace_id},
            )
            return
        if not adapter.application.running:
            raise NotReady(f"workspace {request.workspace_id}'s bot is not running")
        update = parse_update(json.loads(request.body), adapter.application.bot)
        if isinstance(update, str):  # the door process checks the shape, not all PTB reads
            fields = {"workspace": request.workspace_id, "reason": update}
            log.warning("telegram update refused", extra=fields)
            return
        await adapter.feed(update)
