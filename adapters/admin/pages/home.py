"""The first page after login: the workspaces this admin may see."""

from __future__ import annotations

from aiohttp import web

from adapters.admin.render import render

routes = web.RouteTableDef()


@routes.get("/")
async def index(request: web.Request) -> web.Response:
    return render(request, "index.html")
