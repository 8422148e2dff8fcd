"""One session: what it does now (live), its turns newest first, a page at a time, each tool
call folded to one line; Stop while a turn runs, and its queue mode. Its audit events, in
words, are a page of their own."""

from __future__ import annotations

import re

from aiohttp import web

from adapters.admin.access import checked_form, workspace_of
from adapters.admin.deps import DEPS
from adapters.admin.pages.steering import act, label_of, one_of, steering_of, view_of, when
from adapters.admin.render import render
from bridge.admin import History, NotInWorkspace, QueueMode

routes = web.RouteTableDef()

DEFAULT_MODE = ""  # the select's value for "the workspace's default"
CURSOR = re.compile(r"^[A-Za-z0-9_.-]{1,100}$")  # a turn's id in an Older/Newer link
# An event's number: ASCII digits that fit a BIGINT (str.isdigit takes "²", and int() of a
# 5,000-digit string raises).
SEQ = re.compile(r"^[0-9]{1,18}$")


def _history(request: web.Request) -> History:
    deps = request.app[DEPS]
    return History(deps.bridge, deps.config())


def _cursor(request: web.Request, name: str) -> str | None:
    value = request.query.get(name)
    if value is not None and not CURSOR.match(value):
        raise web.HTTPBadRequest(text=f"{name} must name a turn, as the page's links do")
    return value


def _seq(request: web.Request, name: str) -> int | None:
    value = request.query.get(name)
    if value is not None and not SEQ.match(value):
        raise web.HTTPBadRequest(text=f"{name} must be an event's number, as the page's links do")
    return None if value is None else int(value)


@routes.get("/w/{workspace}/sessions/{session}")
async def session(request: web.Request) -> web.Response:
    workspace = workspace_of(request)
    session_id = request.match_info["session"]
    older, newer = _cursor(request, "older"), _cursor(request, "newer")
    try:
        detail = await view_of(request).session(workspace.id, session_id)
        turns = await _history(request).turns(workspace.id, session_id, older=older, newer=newer)
    except NotInWorkspace as exc:
        raise web.HTTPNotFound(text=str(exc)) from None
    return render(
        request,
        "session.html",
        detail=detail,
        turns=turns,
        paged=older is not None or newer is not None,
        modes=[m.value for m in QueueMode],
        when=when,
    )


@routes.get("/w/{workspace}/sessions/{session}/audit")
async def audit(request: web.Request) -> web.Response:
    workspace = workspace_of(request)
    session_id = request.match_info["session"]
    older, newer = _seq(request, "older"), _seq(request, "newer")
    try:
        events = await _history(request).audit(workspace.id, session_id, older=older, newer=newer)
        detail = await view_of(request).session(workspace.id, session_id)
    except NotInWorkspace as exc:
        raise web.HTTPNotFound(text=str(exc)) from None
    return render(
        request,
        "audit.html",
        session_id=session_id,
        session_name=detail.row.name,
        events=events,
        paged=older is not None or newer is not None,
        when=when,
    )


@routes.post("/w/{workspace}/sessions/{session}")
async def steer(request: web.Request) -> web.Response:
    workspace = workspace_of(request)
    session_id = request.match_info["session"]
    form = await checked_form(request)
    back = f"/admin/w/{workspace.id}/sessions/{session_id}"
    steering, admin = steering_of(request), label_of(request)
    if one_of(form, "stop", "queue_mode") == "stop":
        return await act(request, steering.stop(workspace, session_id, admin), back)
    chosen = form.get("mode")
    if chosen != DEFAULT_MODE and chosen not in {m.value for m in QueueMode}:
        raise web.HTTPBadRequest(text=f"no queue mode {chosen!r}")
    mode = QueueMode(chosen) if chosen else None
    return await act(request, steering.set_queue_mode(workspace, session_id, mode, admin), back)
