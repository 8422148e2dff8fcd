"""A workspace's DM pairing: the codes waiting for an answer (approve or deny) and the
senders paired with it (revoke). The same store operations as the chat's buttons and
`switchboard pairing`, the admin named as who decided."""

from __future__ import annotations

from aiohttp import web

from adapters.admin.access import checked_form, workspace_of
from adapters.admin.deps import DEPS
from adapters.admin.pages.steering import act, label_of, when
from adapters.admin.render import render

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
    form = await checked_form(request)
    if form.get("action") not in ("approve", "deny"):
        raise web.HTTPBadRequest(text="action must be approve or deny")
    by = f"admin {label_of(request)}"
    pairs = request.app[DEPS].bridge.pairing
    answered = pairs.answer(
        request.match_info["code"], form.get("action") == "approve", workspace, by
    )
    return await act(request, answered, f"/admin/w/{workspace.id}/pairing")


@routes.post("/w/{workspace}/paired/{platform}/{user}")
async def revoke(request: web.Request) -> web.Response:
    workspace = workspace_of(request)
    form = await checked_form(request)
    if form.get("action") != "revoke":
        raise web.HTTPBadRequest(text="action must be revoke")
    pairs = request.app[DEPS].bridge.pairing
    info = request.match_info
    revoked = pairs.revoke(
        workspace.id, info["platform"], info["user"], f"admin {label_of(request)}"
    )
    return await act(request, revoked, f"/admin/w/{workspace.id}/pairing")
