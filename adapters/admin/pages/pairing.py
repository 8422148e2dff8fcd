"""A workspace's DM pairing: the codes waiting for an answer (approve or deny) and the
senders paired with it (revoke). The same store operations as the chat's buttons and
`switchboard pairing`, the admin named as who decided."""

from __future__ import annotations

from aiohttp import web

from adapters.admin.access import workspace_of
from adapters.admin.deps import DEPS
from adapters.admin.pages.steering import act, action_of, label_of, when
from adapters.admin.render import render
from bridge.admin.words import by_admin

routes = web.RouteTableDef()


@routes.get("/w/{workspace}/pairing")
async def pairing(request: web.Request) -> web.Response:
    workspace = workspace_of(request)
    pairs = request.app[DEPS].bridge.pairing
    return render(
        request,
        "pairing.html",
        pending=await pairs.pending_in(workspace.id),
        paired=await pairs.paired_in(workspace.id),
        when=when,
    )


@routes.post("/w/{workspace}/pairing/{code}")
async def answer(request: web.Request) -> web.Response:
    workspace = workspace_of(request)
    approve = await action_of(request, "approve", "deny") == "approve"
    by = by_admin(label_of(request))
    pairs = request.app[DEPS].bridge.pairing
    answered = pairs.answer(request.match_info["code"], approve, workspace, by)
    return await act(request, answered, f"/admin/w/{workspace.id}/pairing")


@routes.post("/w/{workspace}/paired/{platform}/{user}")
async def revoke(request: web.Request) -> web.Response:
    workspace = workspace_of(request)
    await action_of(request, "revoke")
    pairs = request.app[DEPS].bridge.pairing
    info = request.match_info
    revoked = pairs.revoke(
        workspace.id, info["platform"], info["user"], by_admin(label_of(request))
    )
    return await act(request, revoked, f"/admin/w/{workspace.id}/pairing")
