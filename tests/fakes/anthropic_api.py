"""A loopback fake of the Anthropic Messages API that enforces the real API's request rules.

Every request is checked the way the real service checks it; a broken one gets the 400
`invalid_request_error` the real API sends, and is kept in `refused` so a test can fail
on it. Replies are scripted (`script`) or computed (`responder`), streamed as SSE when the
client asks for a stream, and can be held open (`hold`) to test work in flight.
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

TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")


@dataclass
class Reply:
    blocks: list[dict[str, Any]] = field(default_factory=list)
    stop_reason: str | None = None
    status: int = 200
    error_type: str = ""
    error_message: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    hold: asyncio.Event | None = None  # answer only once this is set (streams: after block 0)
    stream_error: str = ""  # an SSE `error` event of this type instead of the end


def text(t: str, **kw: Any) -> Reply:
    return Reply(blocks=[{"type": "text", "text": t}], **kw)


def tools(*calls: tuple[str, dict[str, Any]], say: str = "", **kw: Any) -> Reply:
    blocks = [{"type": "text", "text": say}] if say else []
    blocks += [{"type": "tool_use", "name": n, "input": i} for n, i in calls]
    return Reply(blocks=blocks, **kw)


def error(status: int, kind: str, message: str, **headers: str) -> Reply:
    return Reply(status=status, error_type=kind, error_message=message, headers=headers)


class InvalidRequest(Exception):
    pass


def check_request(body: dict[str, Any]) -> None:
    """The real API's rules for a Messages request; raises InvalidRequest with its wording."""
    for key, kind in (("model", str), ("max_tokens", int), ("messages", list)):
        if key not in body:
            raise InvalidRequest(f"{key}: Field required")
        if not isinstance(body[key], kind):
            raise InvalidRequest(f"{key}: Input should be a valid {kind.__name__}")
    if body["max_tokens"] < 1:
        raise InvalidRequest("max_tokens: Input should be greater than or equal to 1")
    for i, tool in enumerate(body.get("tools") or []):
        if not TOOL_NAME.match(str(tool.get("name", ""))):
            raise InvalidRequest(
                f"tools.{i}.name: String should match pattern '^[a-zA-Z0-9_-]{{1,128}}$'"
            )
        schema = tool.get("input_schema")
        if not isinstance(schema, dict) or schema.get("type") != "object":
            raise InvalidRequest(f"tools.{i}.input_schema.type: Input should be 'object'")
    messages = body["messages"]
    if not messages:
        raise InvalidRequest("messages: at least one message is required")
    if messages[0].get("role") != "user":
        raise InvalidRequest('messages: first message must use the "user" role')
    seen: set[str] = set()
    for i, message in enumerate(messages):
        role, content = message.get("role"), message.get("content")
        if role not in ("user", "assistant"):
            raise InvalidRequest(f"messages.{i}.role: Input should be 'user' or 'assistant'")
        if i and messages[i - 1]["role"] == role:
            raise InvalidRequest('messages: roles must alternate between "user" and "assistant"')
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        last = i == len(messages) - 1
        if not blocks and not (last and role == "assistant"):
            raise InvalidRequest(
                f"messages.{i}: all messages must have non-empty content except for the "
                "optional final assistant message"
            )
        for j, block in enumerate(blocks):
            kind = block.get("type")
            if kind == "text":
                if block.get("text") == "":
                    raise InvalidRequest("messages: text content blocks must be non-empty")
                if not str(block.get("text")).strip():
                    raise InvalidRequest(
                        "messages: text content blocks must contain non-whitespace text"
                    )
            elif kind == "tool_use":
                if role != "assistant":
                    raise InvalidRequest(
                        f"messages.{i}.content.{j}: tool_use is only allowed in assistant messages"
                    )
                if block["id"] in seen:
                    raise InvalidRequest(f"messages.{i}.content.{j}: `tool_use` ids must be unique")
                seen.add(block["id"])
            elif kind == "tool_result":
                if role != "user":
                    raise InvalidRequest(
                        f"messages.{i}.content.{j}: tool_result is only allowed in user messages"
                    )
            else:
                raise InvalidRequest(f"messages.{i}.content.{j}.type: unknown block type {kind!r}")
        _check_pairing(messages, i, blocks)


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message["content"]
    return [{"type": "text", "text": content}] if isinstance(content, str) else content


def _check_pairing(messages: list[dict[str, Any]], i: int, blocks: list[dict[str, Any]]) -> None:
    role = messages[i]["role"]
    if role == "assistant":
        ids = [b["id"] for b in blocks if b.get("type") == "tool_use"]
        if not ids:
            return
        following = _blocks(messages[i + 1]) if i + 1 < len(messages) else []
        leading = list(itertools.takewhile(lambda b: b.get("type") == "tool_result", following))
        answered = {b.get("tool_use_id") for b in leading}
        missing = [x for x in ids if x not in answered]
        if missing:
            raise InvalidRequest(
                f"messages.{i}: `tool_use` ids were found without `tool_result` blocks "
                f"immediately after: {', '.join(missing)}. Each `tool_use` block must have a "
                "corresponding `tool_result` block in the next message."
            )
    else:
        previous = _blocks(messages[i - 1]) if i else []
        offered = {b["id"] for b in previous if b.get("type") == "tool_use"}
        for j, block in enumerate(blocks):
            if block.get("type") == "tool_result" and block.get("tool_use_id") not in offered:
                raise InvalidRequest(
                    f"messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` "
                    f"blocks: {block.get('tool_use_id')}. Each `tool_result` block must have a "
                    "corresponding `tool_use` block in the previous message."
                )
        kinds = [b.get("type") for b in blocks]
        first_other = next((k for k, t in enumerate(kinds) if t != "tool_result"), len(kinds))
        if "tool_result" in kinds[first_other:]:
            raise InvalidRequest(
                f"messages.{i}: `tool_result` blocks must come first in the content"
            )


class FakeAnthropic:
    def __init__(self) -> None:
        self.script: list[Reply] = []
        self.responder: Callable[[dict[str, Any]], Reply] | None = None
        self.requests: list[dict[str, Any]] = []
        self.refused: list[tuple[dict[str, Any], str]] = []
        self.disconnects = 0
        self.url = ""
        self._ids = itertools.count(1)

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v1/messages", self._messages)
        return app

    def _next_reply(self, body: dict[str, Any]) -> Reply:
        if self.script:
            return self.script.pop(0)
        if self.responder:
            return self.responder(body)
        return text("ok")

    async def _messages(self, request: web.Request) -> web.StreamResponse:
        if not (request.headers.get("x-api-key") or request.headers.get("authorization")):
            return _error(401, "authentication_error", "x-api-key header is required")
        if not request.headers.get("anthropic-version"):
            return _error(400, "invalid_request_error", "anthropic-version header is required")
        body = await request.json()
        try:
            check_request(body)
        except InvalidRequest as exc:
            self.refused.append((body, str(exc)))
            return _error(400, "invalid_request_error", str(exc))
        self.requests.append(body)
        reply = self._next_reply(body)
        if reply.status != 200:
            return _error(reply.status, reply.error_type, reply.error_message, reply.headers)
        message = self._message(body, reply)
        try:
            if body.get("stream"):
                return await self._stream(request, message, reply)
            if reply.hold:
                await reply.hold.wait()
            return web.json_response(message)
        except (asyncio.CancelledError, ConnectionResetError):
            self.disconnects += 1
            raise

    def _message(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        content = []
        for block in reply.blocks:
            if block["type"] == "tool_use" and "id" not in block:
                block = {**block, "id": f"toolu_fake_{next(self._ids):04d}"}
            content.append(block)
        stop = reply.stop_reason or (
            "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn"
        )
        return {
            "id": f"msg_fake_{next(self._ids):04d}",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
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
                    "usage": {"input_tokens": 10, "output_tokens": 1},
                },
            },
        )
        await send("ping", {"type": "ping"})
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
                "usage": {"output_tokens": 5},
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
