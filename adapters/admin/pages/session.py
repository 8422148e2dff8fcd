"""One session: what it does now, its turns newest first, a page at a time, each tool call
folded to one line; Stop while a turn runs, and its queue mode. Live: what it does now, and
on the first page its newest turns, each as its own status says (a new turn comes in at the
top, an ended one says how it ended), from the same macros (`session_parts.html`). Its
audit events, in words, are a page of their own."""

from __future__ import annotations

import re
from typing import Any

from aiohttp import web

from adapters.admin.access import checked_form, flash, login_of, workspace_of
from adapters.admin.deps import DEPS
from adapters.admin.pages.overview import EVENT_STREAM, page_update, stream
from adapters.admin.pages.steering import act, label_of, one_of, steering_of, view_of, when
from adapters.admin.render import SECRETS, TEMPLATES, render
from bridge.admin import QueueMode
from bridge.admin.errors import NotInWorkspace
from bridge.admin.history import History
from bridge.admin.live import Live, SessionPage, live_session
from config.schema import WorkspaceConfig

routes = web.RouteTableDef()

DEFAULT_MODE = ""  # the select's value for "the workspace's default"
MODES = [m.value for m in QueueMode]
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
        modes=MODES,
        when=when,
    )


@routes.get("/w/{workspace}/sessions/{session}/live")
async def live(request: web.Request) -> web.StreamResponse:
    """The page's live parts (`#session`, and `#turn-list` unless `?turns=no`: a page of
    older turns stays put), as server-sent events each time they may have changed, for a
    client that asks for them (an EventSource); anyone else gets them now, as JSON."""
    workspace = workspace_of(request)
    session_id = request.match_info["session"]
    try:
        view_of(request).check_session(workspace.id, session_id)
    except NotInWorkspace as exc:
        raise web.HTTPNotFound(text=str(exc)) from None
    deps = request.app[DEPS]
    newest = request.query.get("turns") != "no"
    feed = live_session(deps.bridge, deps.config(), workspace.id, session_id, newest=newest)
    parts = _parts(request, workspace)

    def update(live: Live[SessionPage]) -> dict[str, Any]:
        found = live.found
        drawn = {"session": str(parts.now(found.detail))}
        if found.turns is not None:
            drawn["turn-list"] = str(parts.turn_list(found.turns, found.detail.row))
        return page_update(drawn, live)

    if EVENT_STREAM not in request.headers.get("Accept", ""):
        try:
            return web.json_response(update(await anext(feed)))
        except StopAsyncIteration:  # it left the workspace since the check
            raise web.HTTPNotFound(text=f"no session {session_id} here") from None
        finally:
            await feed.aclose()
    return await stream(request, feed, update)


def _parts(request: web.Request, workspace: WorkspaceConfig) -> Any:
    """The page's macros (`session_parts.html`) with what they draw with, as on the page."""
    return TEMPLATES.get_template("session_parts.html").make_module(
        {
            SECRETS: request.app[DEPS].bridge.secrets,
            "csrf": login_of(request).csrf,
            "workspace": workspace,
            "modes": MODES,
            "when": when,
        }
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
        return await _stop(request, workspace, session_id, back)
    chosen = form.get("mode")
    if chosen != DEFAULT_MODE and chosen not in {m.value for m in QueueMode}:
        raise web.HTTPBadRequest(text=f"no queue mode {chosen!r}")
    mode = QueueMode(chosen) if chosen else None
    return await act(request, steering.set_queue_mode(workspace, session_id, mode, admin), back)


async def _stop(
    request: web.Request, workspace: WorkspaceConfig, session_id: str, back: str
) -> web.Response:
    """Stop its running turn; with none (Stop stays on the page, said not pressable), say
    so by the session's name: the turn had ended, or none had started."""
    try:
        row = (await view_of(request).session(workspace.id, session_id)).row
    except NotInWorkspace as exc:
        raise web.HTTPNotFound(text=str(exc)) from None
    if row.run_id is None:
        flash(
            request,
            f"Not done: nothing runs in {row.name or row.where} now, so nothing was stopped.",
        )
        raise web.HTTPSeeOther(back)
    return await act(
        request, steering_of(request).stop(workspace, session_id, label_of(request)), back
    )
