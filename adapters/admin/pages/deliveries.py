"""A workspace's deliveries not accepted yet (pending, sending, failed with their last
error), and the failed ones' Retry and Discard."""

from __future__ import annotations

from aiohttp import web

from adapters.admin.access import workspace_of
from adapters.admin.pages.steering import act, action_of, label_of, steering_of, view_of, when
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
    steering = steering_of(request)
    steps = {"retry": steering.retry, "discard": steering.discard}
    step = steps[await action_of(request, *steps)]
    action = step(workspace, request.match_info["delivery"], label_of(request))
    return await act(request, action, f"/admin/w/{workspace.id}/deliveries")
