"""Logging in (a token for a session cookie) and out."""

from __future__ import annotations

import logging
import math

from aiohttp import web

from adapters.admin.access import COOKIE, LOGINS, checked_form
from adapters.admin.deps import DEPS
from adapters.admin.render import render
from adapters.admin.sessions import Logins, identify

log = logging.getLogger(__name__)
routes = web.RouteTableDef()


@routes.get("/login")
async def login_page(request: web.Request) -> web.Response:
    return render(request, "login.html", error=None)


@routes.post("/login")
async def login(request: web.Request) -> web.Response:
    logins = request.app[LOGINS]
    address = request.remote or "unknown"
    form = await request.post()
    token = form.get("token")
    config = request.app[DEPS].config()
    admin = identify(config, token) if isinstance(token, str) and token else None
    if admin is None or not isinstance(token, str):
        return _refused(request, logins, address)
    ttl = config.admin.session_ttl_s
    cookie = logins.open(admin, token, ttl)
    log.info("admin logged in", extra={"admin": admin.label, "remote": address})
    response = web.HTTPSeeOther("/admin/")
    response.set_cookie(
        COOKIE,
        cookie,
        max_age=int(ttl),
        path="/admin",
        httponly=True,
        samesite="Strict",
        secure=request.secure or (config.server.public_url or "").startswith("https://"),
    )
    raise response


def _refused(request: web.Request, logins: Logins, address: str) -> web.Response:
    """A wrong token. Its address's wrong tries are counted, and past the limit answered 429
    and logged once a window; an admin's right token is never refused because of them (behind
    a shared proxy every admin has the same address). Guessing is held off by the tokens'
    strength (config/admin.py), not by this count."""
    wait_s = logins.blocked_for(address)
    logins.failed(address)
    if wait_s > 0:
        response = render(
            request,
            "login.html",
            status=429,
            error=f"Too many wrong tokens from your address: wait {math.ceil(wait_s)} s.",
        )
        response.headers["Retry-After"] = str(math.ceil(wait_s))
        return response
    log.warning("admin login refused: wrong token", extra={"remote": address})
    if logins.blocked_for(address) > 0:
        log.warning("admin login: too many wrong tokens", extra={"remote": address})
    return render(request, "login.html", status=401, error="That token is not an admin's.")


@routes.post("/logout")
async def logout(request: web.Request) -> web.Response:
    await checked_form(request)
    request.app[LOGINS].close(request.cookies.get(COOKIE))
    response = web.HTTPSeeOther("/admin/login")
    response.del_cookie(COOKIE, path="/admin")
    raise response
