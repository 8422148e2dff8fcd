"""An agent's Memory page: what it keeps across sessions, of every scope, with the operator
whose it is, when and from what (a link to the session it came from); a search; Forget; and
Export as JSON, a download of the whole memory."""

from __future__ import annotations

import json

from aiohttp import web

from adapters.admin.access import workspace_of
from adapters.admin.deps import DEPS
from adapters.admin.pages.steering import act, action_of, label_of, when
from adapters.admin.render import render
from bridge.admin.errors import NotInWorkspace
from bridge.admin.memory import export_memory, forget_memory, read_memory

routes = web.RouteTableDef()


def page_of(workspace_id: str, agent: str) -> str:
    return f"/admin/w/{workspace_id}/memory/{agent}"


@routes.get("/w/{workspace}/memory")
async def first(request: web.Request) -> web.Response:
    """The tab opens on the workspace's default agent's memory."""
    workspace = workspace_of(request)
    raise web.HTTPSeeOther(page_of(workspace.id, workspace.default_agent))


@routes.get("/w/{workspace}/memory/{agent}")
async def memory(request: web.Request) -> web.Response:
    workspace = workspace_of(request)
    bridge = request.app[DEPS].bridge
    try:
        board = await read_memory(
            bridge, workspace, request.match_info["agent"], request.query.get("q", "")
        )
    except NotInWorkspace as exc:
        raise web.HTTPNotFound(text=str(exc)) from None
    return render(
        request,
        "memory.html",
        board=board,
        agents=[a.id for a in workspace.agents],
        page=page_of(workspace.id, board.agent),
        when=when,
    )


@routes.get("/w/{workspace}/memory/{agent}/export")
async def export(request: web.Request) -> web.Response:
    workspace = workspace_of(request)
    agent = request.match_info["agent"]
    try:
        kept = await export_memory(request.app[DEPS].bridge, workspace, agent)
    except NotInWorkspace as exc:
        raise web.HTTPNotFound(text=str(exc)) from None
    body = {"workspace": workspace.id, "agent": agent, "memories": kept}
    return web.Response(
        text=json.dumps(body, ensure_ascii=False, indent=2),
        content_type="application/json",
        headers={
            "Content-Disposition": f'attachment; filename="memory-{workspace.id}-{agent}.json"'
        },
    )


@routes.post("/w/{workspace}/memory/{agent}/{memory}")
async def forget(request: web.Request) -> web.Response:
    workspace = workspace_of(request)
    await action_of(request, "forget")
    agent = request.match_info["agent"]
    action = forget_memory(
        request.app[DEPS].bridge,
        workspace,
        agent,
        request.match_info["memory"],
        label_of(request),
    )
    return await act(request, action, page_of(workspace.id, agent))
