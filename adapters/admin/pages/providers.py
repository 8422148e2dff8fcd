"""A workspace's providers (issue 41): each agent's ordered chain with each candidate's state,
until when, its last failure and the sessions on it; the switches between them. Read only:
a candidate comes back by itself, after a probe, or on a config reload."""

from __future__ import annotations

from aiohttp import web

from adapters.admin.access import workspace_of
from adapters.admin.deps import DEPS
from adapters.admin.render import render
from bridge.admin.providers import read_providers

routes = web.RouteTableDef()


@routes.get("/w/{workspace}/providers")
async def providers(request: web.Request) -> web.Response:
    workspace = workspace_of(request)
    board = read_providers(request.app[DEPS].bridge, workspace)
    return render(request, "providers.html", board=board)
