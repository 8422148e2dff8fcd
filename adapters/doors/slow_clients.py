"""Slow clients on the public port: a request's line and headers, then its body, must arrive in
time, or the connection is closed; a client cannot hold a socket (a file) for good by sending a
request a byte at a time, or half of one. Both servers that own the port use it: the door
process, and the main process when it serves the port itself (`intake = "inline"`, replicas).

aiohttp's server closes a connection that has no whole request line and headers `keepalive_timeout`
after it opened or after its last answer, so that one timer bounds both an idle connection and
a request's headers. It has no bound on a body: `body_in_time` reads it under one, before the
handler runs, so a handler takes its body from `request.read()` (webhooks, forms and the proxy
want it whole anyway), not from `request.content`, which has been read."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from adapters.doors import malformed

log = logging.getLogger(__name__)

HEADERS_S = 10.0  # a request's line and headers, from the connection's start or last answer
BODY_S = 30.0  # a request's body, from the end of its headers


def runner(app: web.Application, headers_s: float, body_s: float, **kwargs: Any) -> web.AppRunner:
    """A runner of `app` for the public port: a client whose request line and headers are not
    all in within `headers_s` is closed; one whose body is not all in `body_s` after them gets
    a 408 and is closed. `kwargs` go to `web.AppRunner`. A malformed request is logged once
    a minute per client, without a traceback (`malformed.py`)."""
    malformed.install()
    app.middlewares.insert(0, body_in_time(body_s))
    return web.AppRunner(app, keepalive_timeout=headers_s, **kwargs)


def body_in_time(seconds: float) -> Middleware:
    @web.middleware
    async def read_body_in_time(request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.body_exists:
            try:
                async with asyncio.timeout(seconds):
                    await request.read()  # kept: the handler's own read() returns it
            except TimeoutError:
                timed_out = web.HTTPRequestTimeout(text=f"The body took over {seconds:g} s.")
                timed_out.force_close()
                raise timed_out from None
            except ConnectionResetError:
                # The client went before its body was in: there is no one to answer.
                log.debug("client gone before its request's body", extra={"path": request.path})
                raise web.HTTPBadRequest(text="The body did not all arrive.") from None
        return await handler(request)

    return read_body_in_time
