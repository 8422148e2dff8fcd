"""A Messages API body encoded beforehand (`anthropic_body.py`), posted: the first one of a
client through the SDK (`posted`), the next ones straight to aiohttp on the SDK's own
connection pool, with what the SDK sent the first time.

The SDK's work for each request cost more CPU than the rest of the request: it copies the
options, builds the headers and the URL (httpx2 parses it twice), makes an idempotency key it
does not send, and its httpx2 layer wraps aiohttp's request, response and stream in its own.
For one streamed answer on loopback, 1.1 ms of CPU through the SDK against 0.4 ms straight
(issue 45, `docs/benchmarks.md`). Nothing of what goes out changes: the URL, every header and
the time limits are those of the SDK's first request (`x-stainless-retry-count` stays 0: the
SDK's retries are off), the body is the same bytes. What comes back is read as the SDK reads
it: an error status becomes the SDK's own exception, made by the SDK from the response; a
failure to connect, the SDK's `APIConnectionError` or `APITimeoutError`; one while the answer
streams in, httpx2's (the SDK's aiohttp transport maps aiohttp's the same way); the lines are
decoded by httpx2's own decoders.

Straight only where nothing of the SDK's varies from one request to the next: no
OpenTelemetry span recorded (the SDK's tracer only makes spans that record nothing until a
tracer provider is set: straight while none is), no middleware, no credentials the SDK
refreshes (`custom_auth`), no idempotency header, and no proxy. Elsewhere every request goes
through the SDK as before.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anthropic
import httpx2
from aiohttp import ClientResponse, ClientSession, ClientTimeout
from anthropic._vendor.httpx_aiohttp.transport import AiohttpTransport, map_aiohttp_exceptions
from httpx2._decoders import LineDecoder, TextDecoder
from opentelemetry import trace

from runtime.providers.anthropic_body import posted

# Not kept: aiohttp sets them for each request (the same values for the same URL and body).
SET_PER_REQUEST = ("host", "content-length")


@dataclass(frozen=True, slots=True)
class _Sent:
    """What the SDK sent for its first request, and where."""

    session: ClientSession
    url: str
    headers: dict[str, str]
    timeout: ClientTimeout
    request: httpx2.Request  # named by the errors, as the SDK's name its own


class Streamed:
    """What `read_stream` reads of a response aiohttp gave: its lines, and the response as
    httpx2 would have given it (an error event mid-stream carries it)."""

    def __init__(self, response: ClientResponse, request: httpx2.Request) -> None:
        self._response = response
        self._request = request

    @property
    def http_response(self) -> httpx2.Response:
        response = self._response
        return httpx2.Response(response.status, headers=response.raw_headers, request=self._request)

    async def iter_lines(self) -> AsyncIterator[str]:
        text = TextDecoder(encoding=self._response.charset or "utf-8")
        lines = LineDecoder()
        with map_aiohttp_exceptions():
            async for chunk in self._response.content.iter_any():
                for line in lines.decode(text.decode(chunk)):
                    yield line
        for line in lines.decode(text.flush()):
            yield line
        for line in lines.flush():
            yield line


def _spans(sdk: anthropic.AsyncAnthropic) -> bool:
    """Whether the SDK would record a span of its request: it has a tracer, and a tracer
    provider that records (its own, or one set for the process)."""
    if sdk._tracer is None:
        return False
    if sdk._open_telemetry.get("tracer_provider") is not None:
        return True
    return not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)


class Poster:
    """Posts the encoded bodies of one SDK client (Anthropic's API: `Client.sends_body`)."""

    def __init__(self, sdk: anthropic.AsyncAnthropic) -> None:
        self._sdk = sdk
        self._sent: _Sent | None = None

    def post(self, body: bytes) -> AbstractAsyncContextManager[Any]:
        """`async with` it: the streamed response (`read_stream` reads it)."""
        sent = self._sent
        if sent is None or sent.session.closed or _spans(self._sdk):
            return self._through_sdk(body)
        return self._straight(sent, body)

    @asynccontextmanager
    async def _through_sdk(self, body: bytes) -> AsyncIterator[Any]:
        async with posted(self._sdk, body) as response:
            self._sent = self._kept(response.http_response.request)
            yield response

    def _kept(self, request: httpx2.Request) -> _Sent | None:
        """What the next requests can send as this one went; None where the SDK makes each
        request its own way."""
        sdk = self._sdk
        if sdk._middleware or sdk.custom_auth is not None or sdk._idempotency_header is not None:
            return None
        transport = sdk._client._transport_for_url(request.url)
        if not isinstance(transport, AiohttpTransport) or transport.proxy is not None:
            return None
        session = transport.client
        if not isinstance(session, ClientSession):
            return None
        limits = request.extensions.get("timeout", {})
        timeout = ClientTimeout(
            sock_connect=limits.get("connect"),
            sock_read=limits.get("read"),
            connect=limits.get("pool"),
        )
        headers = {k: v for k, v in request.headers.items() if k not in SET_PER_REQUEST}
        return _Sent(session, str(request.url), headers, timeout, request)

    @asynccontextmanager
    async def _straight(self, sent: _Sent, body: bytes) -> AsyncIterator[Streamed]:
        sdk = self._sdk
        try:
            with map_aiohttp_exceptions():
                response = await sent.session.post(
                    sent.url, data=body, headers=sent.headers, timeout=sent.timeout
                )
        except httpx2.TimeoutException as exc:
            raise sdk._make_timeout_error(sent.request, exc) from exc
        except Exception as exc:
            raise sdk._make_connection_error(sent.request, exc) from exc
        try:
            if not 200 <= response.status < 300:
                with map_aiohttp_exceptions():
                    content = await response.read()
                failed = httpx2.Response(
                    response.status,
                    headers=response.raw_headers,
                    content=content,
                    request=sent.request,
                )
                raise sdk._make_status_error_from_response(failed) from None
            yield Streamed(response, sent.request)
        finally:
            response.release()
