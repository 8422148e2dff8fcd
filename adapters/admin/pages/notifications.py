"""A workspace's undelivered notifications (not routed, without a route, or whose delivery
failed), each with a form to send it to an operator of the workspace."""

from __future__ import annotations

from aiohttp import web

from adapters.admin.access import checked_form, workspace_of
from adapters.admin.pages.steering import act, label_of, steering_of, view_of, when
from adapters.admin.render import render
from bridge.status import NOT_ROUTED_YET

routes = web.RouteTableDef()


@routes.get("/w/{workspace}/notifications")
async def notifications(request: web.Request) -> web.Response:
    workspace = workspace_of(request)
    view = view_of(request)
    rows = await view.undelivered(workspace.id)
    places = {r.session_id: r.where for r in await view.sessions(workspace.id)}
    return render(
        request,
        "notifications.html",
        notifications=rows,
        places=places,
        when=when,
        not_routed_yet=NOT_ROUTED_YET,
    )


@routes.post("/w/{workspace}/notifications/{notification}")
async def reroute(request: web.Request) -> web.Response:
    workspace = workspace_of(request)
    form = await checked_form(request)
    operator = form.get("operator")
    if form.get("action") != "reroute" or not isinstance(operator, str):
        raise web.HTTPBadRequest(text="action must be reroute, with an operator")
    notification_id = request.match_info["notification"]
    back = f"/admin/w/{workspace.id}/notifications"
    action = steering_of(request).reroute(workspace, notification_id, operator, label_of(request))
    return await act(request, action, back)
