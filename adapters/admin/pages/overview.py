"""A workspace's overview (its connections, its sessions with their live step, how many
deliveries and notifications need the admin) and the live feed those pages follow."""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from adapters.admin.access import workspace_of
from adapters.admin.deps import DEPS
from adapters.admin.pages.steering import seconds, view_of, when
from adapters.admin.render import render
from bridge.admin import SessionRow, live_sessions

routes = web.RouteTableDef()

EVENT_STREAM = "text/event-stream"
KEEPALIVE_S = 15.0  # a comment line this often on a quiet stream: a gone browser is noticed


@dataclass(slots=True)
class LiveStreams:
    """The live streams open now, ended when the server stops."""

    tasks: set[asyncio.Task[Any]] = field(default_factory=set)


STREAMS = web.AppKey("live_streams", LiveStreams)


@routes.get("/w/{workspace}/")
async def overview(request: web.Request) -> web.Response:
    workspace = workspace_of(request)
    found = await view_of(request).overview(workspace)
    return render(request, "overview.html", overview=found, when=when, seconds=seconds)


@routes.get("/w/{workspace}/live")
async def live(request: web.Request) -> web.StreamResponse:
    """Server-sent events, each a JSON list of the workspace's session rows, for a client
    that asks for them (an EventSource); anyone else gets the rows now, as JSON."""
    workspace = workspace_of(request)
    deps = request.app[DEPS]
    if EVENT_STREAM not in request.headers.get("Accept", ""):
        return web.json_response([r.to_json() for r in view_of(request).sessions(workspace.id)])
    response = web.StreamResponse(
        headers={"Content-Type": EVENT_STREAM, "Cache-Control": "no-store"}
    )
    await response.prepare(request)
    streams = request.app[STREAMS].tasks
    me = asyncio.current_task()
    if me is not None:
        streams.add(me)
    rows = live_sessions(deps.bridge, deps.config(), workspace.id)
    following: asyncio.Future[list[SessionRow]] | None = None
    try:
        while True:
            if following is None:
                following = asyncio.ensure_future(anext(rows))
            done, _ = await asyncio.wait({following}, timeout=KEEPALIVE_S)
            if not done:
                await response.write(b": keepalive\n\n")
                continue
            try:
                found = following.result()
            except StopAsyncIteration:
                break
            following = None
            data = json.dumps([r.to_json() for r in found], separators=(",", ":"))
            await response.write(f"data: {data}\n\n".encode())
    except (ConnectionResetError, asyncio.CancelledError):
        pass  # the browser went away, or the server is stopping
    finally:
        if following is not None:
            following.cancel()
            with contextlib.suppress(BaseException):
                await following
        await rows.aclose()
        if me is not None:
            streams.discard(me)
    return response


def install(app: web.Application) -> None:
    """Live streams end when the server stops (it would wait for them otherwise)."""
    app[STREAMS] = LiveStreams()

    async def end_streams(app: web.Application) -> None:
        for task in list(app[STREAMS].tasks):
            task.cancel()

    app.on_shutdown.append(end_streams)
