"""The first page after login: the live board of every workspace this admin may see (what
runs now, what waits for whom, what failed), then the workspaces themselves."""

from __future__ import annotations

from aiohttp import web

from adapters.admin.access import visible_workspaces
from adapters.admin.deps import DEPS
from adapters.admin.pages.overview import board_html, boards_of
from adapters.admin.platform_fields import surfaces
from adapters.admin.render import render
from bridge.admin.board import read_board

routes = web.RouteTableDef()


@routes.get("/")
async def index(request: web.Request) -> web.Response:
    bridge = request.app[DEPS].bridge
    workspaces = visible_workspaces(request)
    boards = [await read_board(bridge, w.id) for w in workspaces]
    board = board_html(request, boards, full=False)
    return render(
        request, "index.html", board=board, surfaces={w.id: surfaces(w) for w in workspaces}
    )


@routes.get("/board")
async def board(request: web.Request) -> web.StreamResponse:
    """Every visible workspace's board, as server-sent events of its HTML when it changes."""
    return await boards_of(request, [w.id for w in visible_workspaces(request)], full=False)
