"""A workspace's overview (placeholder until its sessions and connections are shown)."""

from __future__ import annotations

from aiohttp import web

from adapters.admin.render import render

routes = web.RouteTableDef()


@routes.get("/w/{workspace}/")
async def overview(request: web.Request) -> web.Response:
    return render(request, "overview.html")
