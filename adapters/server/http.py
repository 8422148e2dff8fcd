"""The one aiohttp server for every HTTP surface: health, metrics, the platforms' doors (Slack
events, Telegram webhooks: `adapters/doors/doors.py`) unless the door process serves them, and
the admin console at /admin when the config names an admin.

Replicas (PostgreSQL): every replica serves the doors; the console needs the active one's
live state, so a standby answers /admin with 503, and `/healthz/active` (200 on the active
replica only) lets a load balancer send /admin there."""

from __future__ import annotations

import hmac
import ipaddress
import socket
from collections.abc import Awaitable, Callable

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import SecretStr

from adapters.admin import AdminDeps, admin_app
from adapters.doors.doors import Doors
from adapters.intake.door import DOOR_METRICS, MAX_REQUEST_BYTES
from bridge.service import Bridge
from config.errors import ConfigError


@web.middleware
async def behind_the_doors(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    """A request the door process passed on (over our Unix socket) comes from the address it
    appended to X-Forwarded-For; what comes before it is the client's own chain."""
    peer = request.transport.get_extra_info("socket") if request.transport else None
    forwarded = request.headers.get("X-Forwarded-For")
    if forwarded and peer is not None and peer.family == socket.AF_UNIX:
        *chain, seen = (hop.strip() for hop in forwarded.split(","))
        headers = request.headers.copy()
        del headers["X-Forwarded-For"]
        if chain:
            headers["X-Forwarded-For"] = ", ".join(chain)
        request = request.clone(remote=seen, headers=headers)
    return await handler(request)


_PROXIED = ("X-Forwarded-For", "Forwarded", "X-Real-IP")


def may_scrape(request: web.Request, token: SecretStr | None) -> bool:
    """`/metrics` names the workspaces: only for a client on this machine (not one a reverse
    proxy on this machine passed on), or with the token."""
    if token is not None:
        expected = f"Bearer {token.get_secret_value()}".encode()
        given = request.headers.get("Authorization", "").encode("utf-8", "surrogateescape")
        if hmac.compare_digest(given, expected):
            return True
    if any(name in request.headers for name in _PROXIED):
        return False
    try:
        return ipaddress.ip_address(request.remote or "").is_loopback
    except ValueError:
        return False


def build_app(
    bridge: Bridge,
    doors: Doors | None,
    admin: AdminDeps | None = None,
    *,
    replica: str = "",
    active: Callable[[], bool] = lambda: True,
    metrics_token: Callable[[], SecretStr | None] = lambda: None,
) -> web.Application:
    def role() -> str:
        return "active" if active() else "standby"

    middlewares = [behind_the_doors, console_on_the_active_replica(replica, active)]
    app = web.Application(middlewares=middlewares, client_max_size=MAX_REQUEST_BYTES)

    async def healthz(request: web.Request) -> web.Response:
        said: dict[str, str | int | list[str]] = {
            "status": "ok",
            "replica": replica,
            "role": role(),
        }
        if (homes := bridge.runtime.homes) is not None:  # the sessions whose turns run here
            said |= {"sessions": len(homes.held), "leases_lost": homes.lost}
        if not bridge.placement.everything:  # the workspaces whose bots run here
            said["workspaces"] = bridge.placement.served()
        return web.json_response(said)

    async def healthz_active(request: web.Request) -> web.Response:
        status = 200 if active() else 503
        return web.json_response({"replica": replica, "role": role()}, status=status)

    async def metrics(request: web.Request) -> web.Response:
        if not may_scrape(request, metrics_token()):
            raise web.HTTPUnauthorized(
                text="/metrics answers a client on this machine, or one that sends "
                "Authorization: Bearer <[server] metrics_token>.",
                headers={"WWW-Authenticate": "Bearer"},
            )
        bridge.metrics.replica_active.labels(replica).set(1 if active() else 0)
        if (homes := bridge.runtime.homes) is not None:
            bridge.metrics.replica_sessions.labels(replica).set(len(homes.held))
            bridge.metrics.replica_leases_lost.labels(replica).set(homes.lost)
        body = await bridge.metrics.scrape(bridge.runtime, bridge.store)
        if (doors_count := app.get(DOOR_METRICS)) is not None:  # the doors served here
            body += generate_latest(doors_count)
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})

    app.router.add_get("/healthz", healthz)
    app.router.add_get("/healthz/active", healthz_active)
    app.router.add_get("/metrics", metrics)
    if doors is not None:
        doors.route(app)
    if admin is not None:
        app.router.add_get("/admin", _to_console)
        app.add_subapp("/admin", admin_app(admin))
    return app


async def _to_console(request: web.Request) -> web.Response:
    raise web.HTTPPermanentRedirect("/admin/")


def console_on_the_active_replica(replica: str, active: Callable[[], bool]) -> Middleware:
    """A standby answers /admin with 503: the console needs the active replica's state."""

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.path.startswith("/admin") and not active():
            raise web.HTTPServiceUnavailable(
                text=f"Replica {replica} is a standby; the admin console is served by the active"
                " replica. Route /admin to the replica whose /healthz/active answers 200.",
                headers={"Retry-After": "5"},
            )
        return await handler(request)

    return middleware


async def listen(runner: web.AppRunner, host: str, port: int) -> int:
    """Serve `runner` on host:port; the port it listens on (the one given for 0)."""
    try:
        await web.TCPSite(runner, host, port).start()
    except OSError as exc:
        raise ConfigError(
            f"cannot listen on {host}:{port} ({exc.strerror}); is another Switchboard running? "
            "Set [server] port in the config to use another port."
        ) from None
    return int(runner.addresses[0][1]) if runner.addresses else port
