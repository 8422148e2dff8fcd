"""A workspace's overview: its live board (what runs now, what waits for whom, what failed,
every session by its conversation's name), its connections and admin actions; and the live
feeds the console's pages follow, as server-sent events: a page's parts as HTML, morphed
into it (`live.html`), with what its live region says."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

from aiohttp import web

from adapters.admin.access import still_allowed, workspace_of
from adapters.admin.deps import DEPS
from adapters.admin.pages.steering import view_of, when
from adapters.admin.render import SECRETS, TEMPLATES, code, render
from bridge import cancel_and_wait
from bridge.activity import duration
from bridge.admin.board import Board, read_board
from bridge.admin.live import Live, live_boards, live_sessions
from bridge.admin.records import SessionRow
from config.secrets import Secrets

routes = web.RouteTableDef()

EVENT_STREAM = "text/event-stream"
KEEPALIVE_S = 15.0  # a comment line this often on a quiet stream: a gone browser is noticed
RECHECK_S = 2.0  # how soon a stream ends after its login does (logout, expiry, a reload)
T = TypeVar("T")


@dataclass(slots=True)
class LiveStreams:
    """The live streams open now, ended when the server stops; one that starts after is
    refused (the stop would otherwise wait for it: a minute, aiohttp's limit)."""

    tasks: set[asyncio.Task[Any]] = field(default_factory=set)
    stopping: bool = False


STREAMS = web.AppKey("live_streams", LiveStreams)


def ago(wall: float, now: float) -> str:
    return f"{duration(max(0.0, now - wall))} ago"


def so_far(wall: float, now: float) -> str:
    return f"{duration(max(0.0, now - wall))} so far"


def board_html(request: web.Request, boards: list[Board], *, full: bool) -> str:
    """The boards as the page shows them (`board.html`), secrets masked as on every page;
    `full`: one workspace's page, with every session listed."""
    return TEMPLATES.get_template("board.html").render(
        {
            SECRETS: request.app[DEPS].bridge.secrets,
            "boards": boards,
            "full": full,
            "ago": ago,
            "so_far": so_far,
        }
    )


@routes.get("/w/{workspace}/")
async def overview(request: web.Request) -> web.Response:
    workspace = workspace_of(request)
    found = await view_of(request).overview(workspace)
    board = board_html(request, [found.board], full=True)
    health = request.app[DEPS].bridge.health_of(workspace)  # connections and MCP servers
    return render(request, "overview.html", overview=found, board=board, when=when, health=health)


@routes.get("/w/{workspace}/board")
async def board(request: web.Request) -> web.StreamResponse:
    """The workspace's board, as server-sent events of its HTML each time it changes, for a
    client that asks for them (an EventSource); anyone else gets its HTML now."""
    workspace = workspace_of(request)
    return await boards_of(request, [workspace.id], full=True)


async def boards_of(request: web.Request, ids: list[str], *, full: bool) -> web.StreamResponse:
    bridge = request.app[DEPS].bridge
    if EVENT_STREAM not in request.headers.get("Accept", ""):
        found = [await read_board(bridge, w) for w in ids]
        return web.Response(text=board_html(request, found, full=full), content_type="text/html")
    live = live_boards(bridge, ids)
    return await stream(
        request, live, lambda b: page_update({"board": board_html(request, b.found, full=full)}, b)
    )


def page_update(parts: dict[str, str], live: Live[Any]) -> dict[str, Any]:
    """A live page's event (`live.html`): the HTML of its elements by id, each drawn as the
    page draws it, and what its live region says (turns that started or ended)."""
    return {"parts": parts, "say": live.said}


@routes.get("/w/{workspace}/live")
async def live(request: web.Request) -> web.StreamResponse:
    """Server-sent events, each a JSON list of the workspace's session rows, for a client
    that asks for them (an EventSource); anyone else gets the rows now, as JSON."""
    workspace = workspace_of(request)
    encode = partial(_rows_json, request.app[DEPS].bridge.secrets)
    if EVENT_STREAM not in request.headers.get("Accept", ""):
        return web.json_response(encode(await view_of(request).sessions(workspace.id)))
    deps = request.app[DEPS]
    return await stream(request, live_sessions(deps.bridge, deps.config(), workspace.id), encode)


def _rows_json(secrets: Secrets, rows: list[SessionRow]) -> list[dict[str, Any]]:
    """The rows as the live pages read them, with what each does now as the pages show it
    (`doing_html`: names as code, as the `code` filter makes them), secrets masked."""
    return [
        {**secrets.masked(r.to_json()), "doing_html": str(code(secrets.mask(r.doing)))}
        for r in rows
    ]


async def stream(
    request: web.Request, source: AsyncGenerator[T, None], encode: Callable[[T], Any]
) -> web.StreamResponse:
    """Server-sent events of what `source` yields (`encode`d, as JSON) for as long as the
    browser listens, its login lasts and the server runs."""
    live = request.app[STREAMS]
    if live.stopping:
        await source.aclose()
        raise web.HTTPServiceUnavailable(text="Switchboard is stopping.")
    # Counted before the first await: a stream that counted itself once its answer had
    # started was missed by a stop that began meanwhile, and the stop waited for it.
    me = asyncio.current_task()
    if me is not None:
        live.tasks.add(me)
    response = web.StreamResponse(
        headers={"Content-Type": EVENT_STREAM, "Cache-Control": "no-store"}
    )
    following: asyncio.Future[T] | None = None
    quiet_s = 0.0
    try:
        await response.prepare(request)
        while still_allowed(request):
            if following is None:
                following = asyncio.ensure_future(anext(source))
            done, _ = await asyncio.wait({following}, timeout=RECHECK_S)
            if not done:
                quiet_s += RECHECK_S
                if quiet_s >= KEEPALIVE_S:
                    await response.write(b": keepalive\n\n")
                    quiet_s = 0.0
                continue
            quiet_s = 0.0
            try:
                found = following.result()
            except StopAsyncIteration:
                break
            following = None
            if not still_allowed(request):
                break
            data = json.dumps(encode(found), separators=(",", ":"))
            await response.write(f"data: {data}\n\n".encode())
    except (ConnectionResetError, asyncio.CancelledError):
        pass  # the browser went away, or the server is stopping
    finally:
        await cancel_and_wait(following)
        await source.aclose()
        if me is not None:
            live.tasks.discard(me)
    return response


def install(app: web.Application) -> None:
    """Live streams end when the server stops (it would wait for them otherwise)."""
    app[STREAMS] = LiveStreams()

    async def end_streams(app: web.Application) -> None:
        live = app[STREAMS]
        live.stopping = True
        for task in list(live.tasks):
            task.cancel()

    app.on_shutdown.append(end_streams)
