"""The one aiohttp server for every HTTP surface: health, metrics, Slack events, Telegram
webhooks."""

from __future__ import annotations

import hmac
from collections.abc import Mapping

from aiohttp import web

from adapters.slack import SlackFront
from adapters.telegram import TelegramAdapter
from bridge import Bridge

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"


def build_app(
    bridge: Bridge,
    telegram: Mapping[str, TelegramAdapter] | None = None,
    slack: SlackFront | None = None,
) -> web.Application:
    app = web.Application()
    bots = telegram or {}

    async def healthz(request: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    async def metrics(request: web.Request) -> web.Response:
        return web.Response(
            text=bridge.metrics.render(), content_type="text/plain", charset="utf-8"
        )

    async def telegram_webhook(request: web.Request) -> web.Response:
        adapter = bots.get(request.match_info["workspace_id"])
        if adapter is None or adapter.settings.mode != "webhook":
            raise web.HTTPNotFound(text="no Telegram webhook for this workspace")
        expected = adapter.settings.webhook_secret
        given = request.headers.get(SECRET_HEADER, "")
        if expected is None or not hmac.compare_digest(given, expected.get_secret_value()):
            raise web.HTTPForbidden(text="wrong secret token")
        await adapter.feed(await request.json())  # stored before Telegram gets its 200
        return web.Response(text="ok")

    app.router.add_get("/healthz", healthz)
    app.router.add_get("/metrics", metrics)

    async def slack_events(request: web.Request) -> web.Response:
        if slack is None:
            raise web.HTTPNotFound(text="no Slack workspace takes events over HTTP here")
        return await slack.handle(request)

    app.router.add_post("/telegram/{workspace_id}", telegram_webhook)
    app.router.add_post("/slack/events", slack_events)
    return app
