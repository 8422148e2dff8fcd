"""A workspace's deliveries not accepted yet (pending, sending, failed with their last
error), and the failed ones' Retry and Discard."""

from __future__ import annotations

from aiohttp import web

from adapters.admin.access import checked_form, workspace_of
from adapters.admin.pages.steering import act, label_of, steering_of, view_of, when
from adapters.admin.render import render
from bridge.types import DeliveryStatus

routes = web.RouteTableDef()


@routes.get("/w/{workspace}/deliveries")
async def deliveries(request: web.Request) -> web.Response:
    workspace = workspace_of(request)
    rows = await view_of(request).deliveries(workspace.id)
    return render(
        request, "deliveries.html", deliveries=rows, failed=DeliveryStatus.FAILED, when=when
    )


@routes.post("/w/{workspace}/deliveries/{delivery}")
async def steer(request: web.Request) -> web.Response:
    workspace = workspace_of(request)
    delivery_id = request.match_info["delivery"]
    form = await checked_form(request)
    back = f"/admin/w/{workspace.id}/deliveries"
    steering, admin = steering_of(request), label_of(request)
    match form.get("action"):
        case "retry":
            return await act(request, steering.retry(workspace, delivery_id, admin), back)
        case "discard":
            return await act(request, steering.discard(workspace, delivery_id, admin), back)
    raise web.HTTPBadRequest(text="action must be retry or discard")
