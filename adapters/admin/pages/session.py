"""One session: its state, step and queue (live), transcript and audit trail; Stop while a
turn runs, and its queue mode."""

from __future__ import annotations

from aiohttp import web

from adapters.admin.access import checked_form, workspace_of
from adapters.admin.pages.steering import act, label_of, seconds, steering_of, view_of, when
from adapters.admin.render import render
from bridge.admin import NotInWorkspace, QueueMode

routes = web.RouteTableDef()

DEFAULT_MODE = ""  # the select's value for "the workspace's default"


@routes.get("/w/{workspace}/sessions/{session}")
async def session(request: web.Request) -> web.Response:
    workspace = workspace_of(request)
    try:
        detail = await view_of(request).session(workspace.id, request.match_info["session"])
    except NotInWorkspace as exc:
        raise web.HTTPNotFound(text=str(exc)) from None
    return render(
        request,
        "session.html",
        detail=detail,
        modes=[m.value for m in QueueMode],
        when=when,
        seconds=seconds,
    )


@routes.post("/w/{workspace}/sessions/{session}")
async def steer(request: web.Request) -> web.Response:
    workspace = workspace_of(request)
    session_id = request.match_info["session"]
    form = await checked_form(request)
    back = f"/admin/w/{workspace.id}/sessions/{session_id}"
    steering, admin = steering_of(request), label_of(request)
    match form.get("action"):
        case "stop":
            return await act(request, steering.stop(workspace, session_id, admin), back)
        case "queue_mode":
            chosen = form.get("mode")
            if chosen != DEFAULT_MODE and chosen not in {m.value for m in QueueMode}:
                raise web.HTTPBadRequest(text=f"no queue mode {chosen!r}")
            mode = QueueMode(chosen) if chosen else None
            return await act(
                request, steering.set_queue_mode(workspace, session_id, mode, admin), back
            )
    raise web.HTTPBadRequest(text="action must be stop or queue_mode")
