"""A loopback fake of the Anthropic Messages API that enforces the real API's request rules.

Every request is checked the way the real service checks it (anthropic_rules.py); a broken
one gets the 400 `invalid_request_error` the real API sends, and is kept in `refused` so a
test can fail on it. Requests are counted and cached as anthropic_tokens.py describes: one
over `context_window` gets the API's "prompt is too long" 400, and every answer reports its
usage (cached, written, uncached, output) truthfully. `POST /v1/messages/count_tokens`
answers the same count. Replies are scripted (`script`) or computed (`responder`), streamed
as SSE when the client asks for a stream, and can be held open (`hold`) to test work in
flight.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.fakes.anthropic_rules import InvalidRequest, check_request
from tests.fakes.anthropic_tokens import (
    CHARS_PER_TOKEN,
    Counted,
    PromptCache,
    block_tokens,
    count_tokens,
)


@dataclass
class Reply:
    blocks: list[dict[str, Any]] = field(default_factory=list)
    stop_reason: str | None = None
    status: int = 200
    error_type: str = ""
    error_message: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    hold: asyncio.Event | None = None  # answer only once this is set (streams: after block 0)
    begin: asyncio.Event | None = None  # streams: no block before this is set
    stream_error: str = ""  # an SSE `error` event of this type instead of the end
    stream_cut: bool = False  # the stream ends after the first block, without message_stop


def text(t: str, **kw: Any) -> Reply:
    return Reply(blocks=[{"type": "text", "text": t}], **kw)


def tools(*calls: tuple[str, dict[str, Any]], say: str = "", **kw: Any) -> Reply:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": say}] if say else []
    blocks += [{"type": "tool_use", "name": n, "input": i} for n, i in calls]
    return Reply(blocks=blocks, **kw)


def after_tools(body: dict[str, Any]) -> bool:
    """Whether the request carries the results of the tools the model called last: a
    turn's next round, where a responder tells a turn's rounds apart (a child agent's
    requests and its parent's interleave in no promised order, so one shared `script`
    cannot give each its own)."""
    content = body["messages"][-1]["content"]
    return isinstance(content, list) and any(b.get("type") == "tool_result" for b in content)


def error(status: int, kind: str, message: str, **headers: str) -> Reply:
    return Reply(status=status, error_type=kind, error_message=message, headers=headers)


MAX_REQUEST_BYTES = 32 * 1024 * 1024  # the Messages API's request size limit
MODEL_MAX_TOKENS = 64_000  # what the Models API says a model's max_tokens may be
# What the Models API knows (`GET /v1/models/{id}`): id -> display name.
MODELS = {
    "claude-sonnet-4-5": "Claude Sonnet 4.5",
    "claude-opus-4-1": "Claude Opus 4.1",
    "claude-haiku-4-5": "Claude Haiku 4.5",
    "test-model": "Test Model",
    "claude-test-model": "Claude Test Model",
}


class FakeAnthropic:
    def __init__(self, context_window: int = 200_000) -> None:
        self.script: list[Reply] = []
        self.responder: Callable[[dict[str, Any]], Reply] | None = None
        self.requests: list[dict[str, Any]] = []
        self.refused: list[tuple[dict[str, Any], str]] = []
        self.usages: list[dict[str, int]] = []  # of each answered message, in order
        self.context_window = context_window
        self.cache = PromptCache()
        self.disconnects = 0
        self.url = ""
        self.api_key: str | None = None  # set: any other key is refused, as the API does
        self._ids = itertools.count(1)

    def app(self) -> web.Application:
        app = web.Application(client_max_size=MAX_REQUEST_BYTES)
        app.router.add_post("/v1/messages", self._messages)
        app.router.add_post("/v1/messages/count_tokens", self._count_tokens)
        app.router.add_get("/v1/models/{model_id}", self._model)
        return app

    def _refused_key(self, request: web.Request) -> web.Response | None:
        bearer = request.headers.get("authorization", "")
        key = request.headers.get("x-api-key") or bearer.removeprefix("Bearer ") or None
        if not key:
            return _error(401, "authentication_error", "x-api-key header is required")
        if self.api_key is not None and key != self.api_key:
            return _error(401, "authentication_error", "invalid x-api-key")
        return None

    async def _model(self, request: web.Request) -> web.Response:
        refused = self._refused_key(request)
        if refused is not None:
            return refused
        model = request.match_info["model_id"]
        if model not in MODELS:
            return _error(404, "not_found_error", f"model: {model}")
        return web.json_response(
            {
                "type": "model",
                "id": model,
                "display_name": MODELS[model],
                "created_at": "2025-09-29T00:00:00Z",
                # As the API answers now: the model's input window and largest max_tokens.
                "max_input_tokens": self.context_window,
                "max_tokens": MODEL_MAX_TOKENS,
            }
        )

    def tool_results(self) -> list[dict[str, Any]]:
        """The tool_result blocks the model was sent in the newest request, as sent."""
        return [
            block
            for message in self.requests[-1]["messages"]
            if isinstance(message["content"], list)
            for block in message["content"]
            if block.get("type") == "tool_result"
        ]

    def _next_reply(self, body: dict[str, Any]) -> Reply:
        if self.script:
            return self.script.pop(0)
        if self.responder:
            return self.responder(body)
        return text("ok")

    def _check(self, body: dict[str, Any], *, counting: bool = False) -> None:
        check_request(body, counting=counting)
        if counting:
            return
        # The API's two wordings: the input alone is over the window, or it is with the room
        # asked for the answer. count_tokens enforces neither.
        tokens, most = count_tokens(body), self.context_window
        if tokens > most:
            raise InvalidRequest(f"prompt is too long: {tokens} tokens > {most} maximum")
        if tokens + body["max_tokens"] > most:
            raise InvalidRequest(
                f"input length and `max_tokens` exceed context limit: {tokens} + "
                f"{body['max_tokens']} > {most}, decrease input length or `max_tokens` and "
                "try again"
            )

    async def _read(
        self, request: web.Request, *, counting: bool = False
    ) -> dict[str, Any] | web.Response:
        """The request's body, or the error response the real API would send instead."""
        refused = self._refused_key(request)
        if refused is not None:
            return refused
        if not request.headers.get("anthropic-version"):
            return _error(400, "invalid_request_error", "anthropic-version header is required")
        body: dict[str, Any] = await request.json()
        try:
            self._check(body, counting=counting)
        except InvalidRequest as exc:
            self.refused.append((body, str(exc)))
            return _error(400, "invalid_request_error", str(exc))
        return body

    async def _count_tokens(self, request: web.Request) -> web.Response:
        body = await self._read(request, counting=True)
        if isinstance(body, web.Response):
            return body
        return web.json_response({"input_tokens": count_tokens(body)})

    async def _messages(self, request: web.Request) -> web.StreamResponse:
        body = await self._read(request)
        if isinstance(body, web.Response):
            return body
        self.requests.append(body)
        reply = self._next_reply(body)
        if reply.status != 200:
            return _error(reply.status, reply.error_type, reply.error_message, reply.headers)
        message = self._message(body, reply, self.cache.use(body["model"], body))
        self.usages.append(message["usage"])
        try:
            if body.get("stream"):
                return await self._stream(request, message, reply)
            if reply.hold:
                await reply.hold.wait()
            return web.json_response(message)
        except (asyncio.CancelledError, ConnectionResetError):
            self.disconnects += 1
            raise

    def _message(self, body: dict[str, Any], reply: Reply, counted: Counted) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        room, truncated = body["max_tokens"] * CHARS_PER_TOKEN, False  # it stops at max_tokens
        for block in reply.blocks:
            if block["type"] == "tool_use" and "id" not in block:
                block = {**block, "id": f"toolu_fake_{next(self._ids):04d}"}
            if block["type"] == "text":
                truncated = len(block["text"]) > room
                block = {**block, "text": block["text"][: max(1, room)]}
                room -= len(block["text"])
            content.append(block)
            if truncated:
                break
        stop = reply.stop_reason or (
            "max_tokens"
            if truncated
            else "tool_use"
            if any(b["type"] == "tool_use" for b in content)
            else "end_turn"
        )
        return {
            "id": f"msg_fake_{next(self._ids):04d}",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {
                "input_tokens": counted.input_tokens,
                "cache_creation_input_tokens": counted.cache_creation_input_tokens,
                "cache_read_input_tokens": counted.cache_read_input_tokens,
                "output_tokens": max(1, sum(block_tokens(b) for b in content)),
            },
        }

    async def _stream(
        self, request: web.Request, message: dict[str, Any], reply: Reply
    ) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)

        async def send(event: str, data: dict[str, Any]) -> None:
            await response.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())

        await send(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    **message,
                    "content": [],
                    "stop_reason": None,
                    "usage": {**message["usage"], "output_tokens": 1},
                },
            },
        )
        await send("ping", {"type": "ping"})
        if reply.begin:
            await reply.begin.wait()
        for index, block in enumerate(message["content"]):
            if block["type"] == "text":
                await send(
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {"type": "text", "text": ""},
                    },
                )
                words = re.findall(r"\S+\s*|\s+", block["text"]) or [""]
                for word in words:
                    await send(
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": index,
                            "delta": {"type": "text_delta", "text": word},
                        },
                    )
            else:
                await send(
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {**block, "input": {}},
                    },
                )
                raw = json.dumps(block["input"])
                for part in (raw[: len(raw) // 2], raw[len(raw) // 2 :]):
                    await send(
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": index,
                            "delta": {"type": "input_json_delta", "partial_json": part},
                        },
                    )
            await send("content_block_stop", {"type": "content_block_stop", "index": index})
            if index == 0 and reply.hold:
                await reply.hold.wait()
            if reply.stream_cut:
                return response
            if reply.stream_error:
                await send(
                    "error",
                    {
                        "type": "error",
                        "error": {"type": reply.stream_error, "message": "Overloaded"},
                    },
                )
                return response
        await send(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                "usage": message["usage"],  # cumulative, as the API sends it
            },
        )
        await send("message_stop", {"type": "message_stop"})
        return response


def _error(
    status: int, kind: str, message: str, headers: dict[str, str] | None = None
) -> web.Response:
    return web.json_response(
        {"type": "error", "error": {"type": kind, "message": message}},
        status=status,
        headers={"request-id": "req_fake", **(headers or {})},
    )
