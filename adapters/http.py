"""The one aiohttp server for every HTTP surface: health, metrics (and, later, webhooks)."""

from __future__ import annotations

from aiohttp import web

from bridge import Bridge


def build_app(bridge: Bridge) -> web.Application:
    app = web.Application()

    async def healthz(request: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    async def metrics(request: web.Request) -> web.Response:
        return web.Response(
            text=bridge.metrics.render(),
            content_type="text/plain",
            charset="utf-8",
            headers={"X-Content-Type-Options": "nosniff"},
        )

    app.router.add_get("/healthz", healthz)
    app.router.add_get("/metrics", metrics)
    return app
