"""A workspace's tool calls waiting for an operator's approval, with Approve and Deny: the
same answer as the chat's buttons, the admin named as who decided."""

from __future__ import annotations

from aiohttp import web

from adapters.admin.access import checked_form, workspace_of
from adapters.admin.pages.steering import act, label_of, steering_of, view_of, when
from adapters.admin.render import render

routes = web.RouteTableDef()


@routes.get("/w/{workspace}/approvals")
async def approvals(request: web.Request) -> web.Response:
    workspace = workspace_of(request)
    rows = await view_of(request).approvals(workspace.id)
    return render(request, "approvals.html", approvals=rows, when=when)


@routes.post("/w/{workspace}/approvals/{approval}")
async def answer(request: web.Request) -> web.Response:
    workspace = workspace_of(request)
    form = await checked_form(request)
    if form.get("action") not in ("approve", "deny"):
        raise web.HTTPBadRequest(text="action must be approve or deny")
    approve = form.get("action") == "approve"
    action = steering_of(request).answer_approval(
        workspace, request.match_info["approval"], approve, label_of(request)
    )
    return await act(request, action, f"/admin/w/{workspace.id}/approvals")
