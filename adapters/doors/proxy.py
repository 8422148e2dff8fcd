"""Every path of the port but the platform doors (health, metrics, the admin console with its
live page) goes through to the main process's HTTP server, on a Unix socket. The response is
passed on as it comes, chunk by chunk, so a stream of server-sent events stays live."""

from __future__ import annotations

import logging
from pathlib import Path

import aiohttp
from aiohttp import web
from prometheus_client import CollectorRegistry, generate_latest

log = logging.getLogger(__name__)

# Hop-by-hop headers (RFC 9110 7.6.1) and those aiohttp sets itself for what it sends.
_NOT_PASSED = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "content-length",
        "host",
    }
)
# Set by us: the address we saw appended to the client's own chain, and the main process
# takes only the last one (the console's login limits wrong tokens per address; a client on
# this machine may read /metrics, unless it came through a proxy of its own).
_OURS = frozenset({"x-forwarded-for"})


def _unavailable() -> web.HTTPServiceUnavailable:
    return web.HTTPServiceUnavailable(
        text="Switchboard is starting or stopping; try again in a moment.",
        headers={"Retry-After": "2"},
    )


class Proxy:
    def __init__(self, upstream: Path) -> None:
        self._session = aiohttp.ClientSession(
            connector=aiohttp.UnixConnector(path=str(upstream)),
            # Shares nothing between clients: a jar would keep one client's session cookie
            # and send it with every other client's request.
            cookie_jar=aiohttp.DummyCookieJar(),
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=5),
            auto_decompress=False,
        )
        self._streaming: set[aiohttp.ClientResponse] = set()
        self._stopping = False  # `end_streams` ran: an answer that arrives after is cut too

    async def _upstream(self, request: web.Request) -> aiohttp.ClientResponse:
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _NOT_PASSED | _OURS}
        headers["Host"] = request.host
        if request.remote:
            chain = request.headers.getall("X-Forwarded-For", [])
            headers["X-Forwarded-For"] = ", ".join([*chain, request.remote])
        try:
            return await self._session.request(
                request.method,
                f"http://switchboard{request.path_qs}",
                headers=headers,
                data=await request.read() if request.body_exists else None,
                allow_redirects=False,
            )
        except (aiohttp.ClientError, OSError):
            raise _unavailable() from None

    async def metrics(self, ours: CollectorRegistry, request: web.Request) -> web.Response:
        """`/metrics` as the main process answers it, with what this process's doors count
        after it when the client may read it (the main process said 200)."""
        async with await self._upstream(request) as upstream:
            body = await upstream.read()
            headers = {n: v for n, v in upstream.headers.items() if n.lower() not in _NOT_PASSED}
        if upstream.status == 200 and request.method == "GET":
            body += generate_latest(ours)
        return web.Response(status=upstream.status, body=body, headers=headers)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        upstream = await self._upstream(request)
        if self._stopping:  # a stop began while the main process answered: cut it as well
            upstream.close()
            raise _unavailable()
        async with upstream:
            response = web.StreamResponse(status=upstream.status, reason=upstream.reason)
            for name, value in upstream.headers.items():
                if name.lower() not in _NOT_PASSED:
                    response.headers.add(name, value)
            if upstream.content_length is not None:
                response.content_length = upstream.content_length
            self._streaming.add(upstream)
            try:
                await response.prepare(request)
                async for chunk in upstream.content.iter_any():
                    await response.write(chunk)
                await response.write_eof()
            except ConnectionResetError:  # the client went (a closed tab): no one to tell
                log.debug("client gone before its answer", extra={"path": request.path})
            except aiohttp.ClientError:
                if upstream not in self._streaming:  # ended by `end_streams`: we stop
                    return response
                raise
            finally:
                self._streaming.discard(upstream)
        return response

    async def end_streams(self, app: web.Application | None = None) -> None:
        """Cut the answers still streaming (the console's live page never ends by itself), so
        that a stop waits on the requests that finish, not on an open tab. Its signature is
        aiohttp's `on_shutdown`."""
        self._stopping = True
        streaming, self._streaming = self._streaming, set()
        for upstream in streaming:
            upstream.close()

    async def close(self) -> None:
        await self._session.close()
