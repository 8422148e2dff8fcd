"""Who is asking, and may they: every `/admin` request but the login page needs a live login,
and every route with `{workspace}` in its path is answered 403 unless the admin is that
workspace's (or the global) admin. Scoping is checked here, once, not by each page."""

from __future__ import annotations

import hmac
import logging
from collections.abc import Awaitable, Callable

from aiohttp import web
from multidict import MultiDictProxy

from adapters.admin.deps import DEPS
from adapters.admin.sessions import Admin, Login, Logins
from config.schema import WorkspaceConfig

log = logging.getLogger(__name__)

COOKIE = "switchboard_admin"
LOGINS = web.AppKey("logins", Logins)
_LOGIN = web.RequestKey("login", Login)
OPEN_PATHS = ("/admin/login", "/admin/static/")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@web.middleware
async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
    if not request.path.startswith(OPEN_PATHS):
        login = request.app[LOGINS].find(request.cookies.get(COOKIE), request.app[DEPS].config())
        if login is None:
            if request.method in ("GET", "HEAD"):
                raise web.HTTPSeeOther("/admin/login")
            raise web.HTTPUnauthorized(text="log in at /admin/login first")
        request[_LOGIN] = login
        workspace = request.match_info.get("workspace")
        if workspace is not None and not login.admin.can(workspace):
            log.warning(
                "admin refused another workspace",
                extra={"admin": login.admin.label, "workspace": workspace, "path": request.path},
            )
            raise web.HTTPForbidden(text=f"{login.admin.label} may not see workspace {workspace}")
    response = await handler(request)
    response.headers.setdefault("Cache-Control", "no-store")
    response.headers.setdefault("X-Frame-Options", "DENY")
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    response.headers.setdefault("Referrer-Policy", "same-origin")
    return response


def current_login(request: web.Request) -> Login | None:
    """None only on the pages open to all (the login page)."""
    return request.get(_LOGIN)


def login_of(request: web.Request) -> Login:
    return request[_LOGIN]


def flash(request: web.Request, text: str) -> None:
    """A line the next page this admin sees shows once (what an action did)."""
    login_of(request).flashes.append(text)


def admin_of(request: web.Request) -> Admin:
    return login_of(request).admin


def workspace_of(request: web.Request) -> WorkspaceConfig:
    """The workspace named in the URL, as now configured (the guard has checked access)."""
    name = request.match_info["workspace"]
    config = request.app[DEPS].config()
    found = next((w for w in config.workspaces if w.id == name), None)
    if found is None:
        raise web.HTTPNotFound(text=f"no workspace {name}")
    return found


def visible_workspaces(request: web.Request) -> list[WorkspaceConfig]:
    admin = admin_of(request)
    return [w for w in request.app[DEPS].config().workspaces if admin.can(w.id)]


async def checked_form(
    request: web.Request,
) -> MultiDictProxy[str | bytes | bytearray | web.FileField]:
    """The POSTed form, if it carries this login's CSRF token (a page of ours sent it)."""
    form = await request.post()
    sent = form.get("csrf")
    if not isinstance(sent, str) or not hmac.compare_digest(sent, login_of(request).csrf):
        log.warning(
            "admin request without a valid csrf token",
            extra={"admin": admin_of(request).label, "path": request.path},
        )
        raise web.HTTPForbidden(text="the form was stale or not ours: reload the page and retry")
    return form
