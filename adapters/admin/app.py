"""The console as an aiohttp sub-application, mounted at `/admin` on the one server."""

from __future__ import annotations

from aiohttp import web

from adapters.admin.access import LOGINS, guard
from adapters.admin.deps import DEPS, AdminDeps
from adapters.admin.pages import (
    approvals,
    deliveries,
    home,
    login,
    memory,
    notifications,
    overview,
    pairing,
    providers,
    schedule_edit,
    schedules,
    session,
    settings,
    usage,
)
from adapters.admin.render import HERE
from adapters.admin.sessions import Logins


def admin_app(deps: AdminDeps) -> web.Application:
    app = web.Application(middlewares=[guard])
    app[DEPS] = deps
    app[LOGINS] = Logins()
    overview.install(app)  # live streams end when the server stops
    pages = (
        login,
        home,
        overview,
        session,
        deliveries,
        notifications,
        approvals,
        schedule_edit,
        schedules,
        usage,
        providers,
        memory,
        pairing,
        settings,
    )
    for page in pages:
        app.router.add_routes(page.routes)
    app.router.add_static("/static/", HERE / "static")
    return app
