"""A workspace's tool calls waiting for an operator's approval, with Approve and Deny: the
same answer as the chat's buttons, the admin named as who decided."""

from __future__ import annotations

from aiohttp import web

from adapters.admin.access import workspace_of
from adapters.admin.pages.steering import act, action_of, label_of, steering_of, view_of, when
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
    approve = await action_of(request, "approve", "deny") == "approve"
    action = steering_of(request).answer_approval(
        workspace, request.match_info["approval"], approve, label_of(request)
    )
    return await act(request, action, f"/admin/w/{workspace.id}/approvals")
