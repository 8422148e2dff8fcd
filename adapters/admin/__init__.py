"""The admin console at `/admin`: server-rendered pages over the bridge, scoped per workspace."""

from __future__ import annotations

from typing import TYPE_CHECKING

from adapters.admin.deps import AdminDeps

if TYPE_CHECKING:
    from aiohttp import web

__all__ = ["AdminDeps", "admin_app"]


def admin_app(deps: AdminDeps) -> web.Application:
    """The console's sub-application. Its pages and their templates (Jinja) are imported here,
    when a console is served: a `switchboard run` with no admin configured never loads them."""
    from adapters.admin.app import admin_app as build

    return build(deps)
