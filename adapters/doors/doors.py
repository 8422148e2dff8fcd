"""The platforms' HTTP doors: `POST /slack/events` and `POST /telegram/{workspace_id}`. Each
request is checked (`slack.py`: signed by a configured workspace's secret, for its team, shaped
as Slack sends it; `telegram.py`: the webhook's secret token, a body shaped as an update),
stored through the intake (`adapters/intake/`), and only then answered. The same doors serve
in the door process (`process.py`) and in a main process that serves the port itself (inline,
or a replica on PostgreSQL): there is one way in, whichever process runs it."""

from __future__ import annotations

import logging

from aiohttp import web

from adapters.doors import slack, telegram, telegram_shape
from adapters.doors.keys import Keys
from adapters.intake.record import Arrival, Put

log = logging.getLogger(__name__)

SLACK_SIGNATURE = "slack signature"
TELEGRAM_SECRET = "telegram secret token"


class Doors:
    def __init__(self, keys: Keys, put: Put) -> None:
        self._keys = keys
        self._put = put

    def route(self, app: web.Application) -> None:
        app.router.add_post("/slack/events", self.slack)
        app.router.add_post("/telegram/{workspace_id}", self.telegram)

    async def slack(self, request: web.Request) -> web.Response:
        headers = {k.lower(): v for k, v in request.headers.items()}
        checked = slack.check(self._keys.slack, await request.read(), headers)
        if isinstance(checked, web.Response):
            return checked
        if checked.team is None:
            return checked.answer_check()
        await self._store(
            Arrival(
                "slack",
                checked.workspace_id,
                checked.place,
                checked.platform_id,
                checked.text,
                SLACK_SIGNATURE,
                headers={"content-type": headers.get("content-type", "")},
                query=request.query_string,
            )
        )
        return web.Response(status=200)

    async def telegram(self, request: web.Request) -> web.Response:
        workspace = request.match_info["workspace_id"]
        secret = self._keys.telegram.get(workspace)
        if secret is None:
            raise web.HTTPNotFound(text="no Telegram webhook for this workspace")
        if not telegram.secret_matches(request, secret):
            raise web.HTTPForbidden(text="wrong secret token")
        raw = await request.read()
        update = telegram.checked_json(workspace, raw)
        if isinstance(update, web.Response):
            return update
        where = telegram_shape.place(update)
        key = str(update["update_id"])
        await self._store(Arrival("telegram", workspace, where, key, raw.decode(), TELEGRAM_SECRET))
        return web.Response(text="ok")

    async def _store(self, arrival: Arrival) -> None:
        try:
            await self._put(arrival)
        except Exception:  # not stored: a 500, and the platform sends it again
            fields = {"platform": arrival.platform, "workspace": arrival.workspace_id}
            log.exception("request not stored", extra=fields)
            raise web.HTTPInternalServerError(text="not stored; send it again") from None
