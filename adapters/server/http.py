"""The one aiohttp server for every HTTP surface: health, metrics, and the platforms' doors
(Slack events, Telegram webhooks), each handled by its adapter's front, and the admin
console at /admin when the config names an admin."""

from __future__ import annotations

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST

from adapters.admin import AdminDeps, admin_app
from adapters.slack import SlackFront
from adapters.telegram import TelegramFront
from bridge import Bridge


def build_app(
    bridge: Bridge, slack: SlackFront, telegram: TelegramFront, admin: AdminDeps | None = None
) -> web.Application:
    app = web.Application()

    async def healthz(request: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    async def metrics(request: web.Request) -> web.Response:
        body = await bridge.metrics.scrape(bridge.runtime, bridge.store)
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})

    app.router.add_get("/healthz", healthz)
    app.router.add_get("/metrics", metrics)
    app.router.add_post("/slack/events", slack.handle)
    app.router.add_post("/telegram/{workspace_id}", telegram.handle)
    if admin is not None:

        async def to_console(request: web.Request) -> web.Response:
            raise web.HTTPPermanentRedirect("/admin/")

        app.router.add_get("/admin", to_console)
        app.add_subapp("/admin", admin_app(admin))
    return app
