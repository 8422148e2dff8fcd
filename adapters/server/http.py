"""The one aiohttp server for every HTTP surface: health, metrics, Slack events, Telegram
webhooks."""

from __future__ import annotations

import hmac
import json
import logging
from collections.abc import Mapping

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST

from adapters.slack import SlackFront
from adapters.telegram import TelegramAdapter
from bridge import Bridge

log = logging.getLogger(__name__)

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
        body = await bridge.metrics.scrape(bridge.runtime)
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def telegram_webhook(request: web.Request) -> web.Response:
        workspace = request.match_info["workspace_id"]
        adapter = bots.get(workspace)
        if adapter is None or adapter.settings.mode != "webhook":
            raise web.HTTPNotFound(text="no Telegram webhook for this workspace")
        expected = adapter.settings.webhook_secret
        # As bytes: the header may hold any character, and compare_digest takes only ASCII text.
        given = request.headers.get(SECRET_HEADER, "").encode("utf-8", "surrogateescape")
        if expected is None or not hmac.compare_digest(given, expected.get_secret_value().encode()):
            raise web.HTTPForbidden(text="wrong secret token")
        raw = await request.read()
        try:
            update = json.loads(raw.decode("utf-8"))
        except (ValueError, RecursionError) as exc:  # not UTF-8, not JSON, nested too deeply
            return _refused(workspace, raw, f"the body is not JSON ({exc})")
        try:
            problem = await adapter.feed(update)  # stored before Telegram gets its 200
        except Exception:  # the update is good, but was not stored: let Telegram resend it
            log.exception("telegram update not stored", extra={"workspace": workspace})
            raise web.HTTPInternalServerError(text="update not stored") from None
        if problem is not None:
            return _refused(workspace, raw, problem)
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


def _refused(workspace: str, raw: bytes, reason: str) -> web.Response:
    """A body that is no Telegram update: 400, and a log line saying what is wrong with it."""
    log.warning(
        "telegram update refused",
        extra={"workspace": workspace, "reason": reason, "body_bytes": len(raw)},
    )
    return web.Response(status=400, text=reason)
