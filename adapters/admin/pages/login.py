"""Logging in (a token for a session cookie) and out."""

from __future__ import annotations

import logging
import math

from aiohttp import web

from adapters.admin.access import COOKIE, LOGINS, checked_form
from adapters.admin.deps import DEPS
from adapters.admin.render import render
from adapters.admin.sessions import identify

log = logging.getLogger(__name__)
routes = web.RouteTableDef()


@routes.get("/login")
async def login_page(request: web.Request) -> web.Response:
    return render(request, "login.html", error=None)


@routes.post("/login")
async def login(request: web.Request) -> web.Response:
    logins = request.app[LOGINS]
    address = request.remote or "unknown"
    wait_s = logins.blocked_for(address)
    if wait_s > 0:
        log.warning("admin login refused: too many wrong tokens", extra={"remote": address})
        response = render(
            request,
            "login.html",
            status=429,
            error=f"Too many wrong tokens from your address: wait {math.ceil(wait_s)} s.",
        )
        response.headers["Retry-After"] = str(math.ceil(wait_s))
        return response
    form = await request.post()
    token = form.get("token")
    config = request.app[DEPS].config()
    admin = identify(config, token) if isinstance(token, str) and token else None
    if admin is None:
        logins.failed(address)
        log.warning("admin login refused: wrong token", extra={"remote": address})
        return render(request, "login.html", status=401, error="That token is not an admin's.")
    assert isinstance(token, str)
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
        secure=request.secure,
    )
    raise response


@routes.post("/logout")
async def logout(request: web.Request) -> web.Response:
    await checked_form(request)
    request.app[LOGINS].close(request.cookies.get(COOKIE))
    response = web.HTTPSeeOther("/admin/login")
    response.del_cookie(COOKIE, path="/admin")
    raise response
