"""A loopback fake of an OpenAI-compatible API (Chat Completions, Embeddings, Models) that
enforces the real API's request rules.

Every chat request is checked the way the real service checks it (openai_rules.py); a broken
one gets the 400 `invalid_request_error` OpenAI sends, in its error body
(`{"error": {message, type, param, code}}`), and is kept in `refused` so a test can fail on
it. The Bearer key is checked (`api_key`: any other gets OpenAI's 401). Answers stream as
the real API streams them: a role chunk, the text in word deltas, each tool call's index, id
and name and then its arguments in fragments, the finish_reason chunk, the usage chunk when
`stream_options.include_usage` asks, `data: [DONE]`. Usage is counted truthfully, with
OpenAI's automatic prompt caching: a prefix of 1,024 tokens or more already sent is cached,
in steps of 128 tokens, and reported in `prompt_tokens_details.cached_tokens` (inside
`prompt_tokens`). `ids` picks the tool-call ids it takes and gives (OpenAI's or nine
letters and digits, as Mistral's); `reuse_ids` gives `call_0`, `call_1`... in every answer,
as some servers do. Replies are scripted (`script`) or computed (`responder`).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import itertools
import json
import math
import re
import secrets
import string
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.fakes.openai_rules import OPENAI_IDS, IdRule, InvalidRequest, check_chat_request

CHARS_PER_TOKEN = 4
CACHE_MIN_TOKENS, CACHE_STEP = 1024, 128
EMBEDDING_DIMENSIONS = 8
MODELS = {"gpt-4.1-mini", "gpt-4o", "o4-mini", "mistral-small", "text-embedding-3-small"}


@dataclass
class Reply:
    text: str = ""
    calls: list[tuple[str, dict[str, Any] | str]] = field(default_factory=list)  # str: raw
    refusal: str = ""
    finish_reason: str | None = None
    status: int = 200
    error_type: str = ""
    error_code: str | int | None = None
    error_message: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    hold: asyncio.Event | None = None  # the stream waits for it after its first chunk
    hold_at: int = 0  # ... or, when above 0, after this many of its content deltas
    stream_error: str = ""  # an error chunk of this type after the first content chunk
    stream_cut: bool = False  # the stream ends after the first content chunk


def text(t: str, **kw: Any) -> Reply:
    return Reply(text=t, **kw)


def tools(*calls: tuple[str, dict[str, Any] | str], say: str = "", **kw: Any) -> Reply:
    return Reply(text=say, calls=list(calls), **kw)


def error(
    status: int, kind: str, message: str, *, code: str | int | None = None, **headers: str
) -> Reply:
    return Reply(
        status=status, error_type=kind, error_code=code, error_message=message, headers=headers
    )


def _error(
    status: int,
    message: str,
    kind: str = "invalid_request_error",
    *,
    param: str | None = None,
    code: str | int | None = None,
    headers: dict[str, str] | None = None,
) -> web.Response:
    body = {"error": {"message": message, "type": kind, "param": param, "code": code}}
    return web.json_response(
        body, status=status, headers={"x-request-id": "req_fake", **(headers or {})}
    )


class FakeOpenAI:
    def __init__(self, ids: IdRule = OPENAI_IDS, *, reuse_ids: bool = False) -> None:
        self.ids = ids
        self.reuse_ids = reuse_ids
        self.script: list[Reply] = []
        self.responder: Callable[[dict[str, Any]], Reply] | None = None
        self.requests: list[dict[str, Any]] = []
        self.refused: list[tuple[dict[str, Any], str]] = []
        self.usages: list[dict[str, Any]] = []  # of each answer, as reported
        self.embedded: list[list[str]] = []  # the inputs of each embeddings request
        self.api_key: str | None = None  # set: any other key is refused, as the API does
        self.models = set(MODELS)
        self.url = ""
        self._sent: list[str] = []  # each answered prompt, serialised: what the cache holds
        self._ids = itertools.count(1)

    def app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_post("/v1/embeddings", self._embeddings)
        app.router.add_get("/v1/models/{model_id}", self._model)
        return app

    def _refused_key(self, request: web.Request) -> web.Response | None:
        key = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
        if not key:
            return _error(
                401,
                "You didn't provide an API key. You need to provide your API key in an "
                "Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
            )
        if self.api_key is not None and key != self.api_key:
            shown = f"{key[:3]}*****{key[-4:]}"
            return _error(
                401,
                f"Incorrect API key provided: {shown}. You can find your API key at https://platform.openai.com/account/api-keys.",
                code="invalid_api_key",
            )
        return None

    def _unknown_model(self, model: Any) -> web.Response | None:
        if model in self.models:
            return None
        return _error(
            404,
            f"The model `{model}` does not exist or you do not have access to it.",
            code="model_not_found",
        )

    async def _model(self, request: web.Request) -> web.Response:
        model = request.match_info["model_id"]
        refused = self._refused_key(request) or self._unknown_model(model)
        if refused is not None:
            return refused
        return web.json_response(
            {"id": model, "object": "model", "created": 1_700_000_000, "owned_by": "system"}
        )

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        refused = self._refused_key(request)
        if refused is not None:
            return refused
        body: dict[str, Any] = await request.json()
        try:
            check_chat_request(body, self.ids)
        except InvalidRequest as exc:
            self.refused.append((body, str(exc)))
            return _error(400, str(exc), param=exc.param, code=exc.code)
        unknown = self._unknown_model(body["model"])
        if unknown is not None:
            return unknown
        self.requests.append(body)
        reply = (
            self.script.pop(0)
            if self.script
            else self.responder(body)
            if self.responder
            else text("ok")
        )
        if reply.status != 200:
            return _error(
                reply.status,
                reply.error_message,
                reply.error_type,
                code=reply.error_code,
                headers=reply.headers,
            )
        answer = self._answer(body, reply)
        self.usages.append(answer["usage"])
        if body.get("stream"):
            return await self._stream(request, body, answer, reply)
        return web.json_response(answer)

    def _answer(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        limit = body.get("max_completion_tokens") or body.get("max_tokens") or 10**9
        said, finish = reply.text, reply.finish_reason
        if len(said) > limit * CHARS_PER_TOKEN:  # it stops at the limit
            said, finish = said[: limit * CHARS_PER_TOKEN], finish or "length"
        calls = [
            {
                "id": self._call_id(index),
                "type": "function",
                "function": {
                    "name": name,
                    "arguments": raw if isinstance(raw, str) else json.dumps(raw),
                },
            }
            for index, (name, raw) in enumerate(reply.calls)
        ]
        finish = finish or ("tool_calls" if calls else "stop")
        message: dict[str, Any] = {
            "role": "assistant",
            "content": said or None,
            "refusal": reply.refusal or None,
        }
        if calls:
            message["tool_calls"] = calls
        written = (
            len(said) + len(reply.refusal) + sum(len(json.dumps(c["function"])) for c in calls)
        )
        return {
            "id": f"chatcmpl-fake{next(self._ids):04d}",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": body["model"],
            "system_fingerprint": "fp_fake",
            "choices": [
                {"index": 0, "message": message, "logprobs": None, "finish_reason": finish}
            ],
            "usage": self._usage(body, max(1, math.ceil(written / CHARS_PER_TOKEN))),
        }

    def _call_id(self, index: int) -> str:
        if self.ids.nine_alnum:
            return f"{index:09d}" if self.reuse_ids else _random_id(9)
        return f"call_{index}" if self.reuse_ids else "call_" + _random_id(24)

    def _usage(self, body: dict[str, Any], completion: int) -> dict[str, Any]:
        prompt_text = json.dumps([body.get("tools") or [], body["messages"]])
        prompt = math.ceil(len(prompt_text) / CHARS_PER_TOKEN)
        shared = max((_common_prefix(prompt_text, sent) for sent in self._sent), default=0)
        shared_tokens = shared // CHARS_PER_TOKEN
        cached = 0
        if shared_tokens >= CACHE_MIN_TOKENS:
            cached = min(
                prompt,
                CACHE_MIN_TOKENS + (shared_tokens - CACHE_MIN_TOKENS) // CACHE_STEP * CACHE_STEP,
            )
        self._sent.append(prompt_text)
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
        }

    async def _stream(
        self, request: web.Request, body: dict[str, Any], answer: dict[str, Any], reply: Reply
    ) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        with_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        head = {k: answer[k] for k in ("id", "created", "model", "system_fingerprint")}

        async def send(delta: dict[str, Any], finish: str | None = None) -> None:
            choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
            chunk = {**head, "object": "chat.completion.chunk", "choices": [choice]}
            if with_usage:
                chunk["usage"] = None
            await response.write(f"data: {json.dumps(chunk)}\n\n".encode())

        await send({"role": "assistant", "content": "", "refusal": None})
        if reply.hold and not reply.hold_at:
            await reply.hold.wait()
        message = answer["choices"][0]["message"]
        deltas = [{"content": w} for w in re.findall(r"\S+\s*|\s+", message["content"] or "")]
        deltas += [{"refusal": w} for w in re.findall(r"\S+\s*", message["refusal"] or "")]
        for index, call in enumerate(message.get("tool_calls") or []):
            opening = {"index": index, "id": call["id"], "type": "function"}
            deltas.append(
                {
                    "tool_calls": [
                        {**opening, "function": {"name": call["function"]["name"], "arguments": ""}}
                    ]
                }
            )
            raw = call["function"]["arguments"]
            for part in (raw[: len(raw) // 2], raw[len(raw) // 2 :]):
                deltas.append({"tool_calls": [{"index": index, "function": {"arguments": part}}]})
        for n, delta in enumerate(deltas):
            await send(delta)
            if reply.hold and n + 1 == reply.hold_at:
                await reply.hold.wait()
            if n == 0 and reply.stream_cut:
                return response
            if n == 0 and reply.stream_error:
                failure = {
                    "message": "The server had an error while processing your request.",
                    "type": reply.stream_error,
                    "param": None,
                    "code": None,
                }
                await response.write(f"data: {json.dumps({'error': failure})}\n\n".encode())
                return response
        await send({}, answer["choices"][0]["finish_reason"])
        if with_usage:
            chunk = {
                **head,
                "object": "chat.completion.chunk",
                "choices": [],
                "usage": answer["usage"],
            }
            await response.write(f"data: {json.dumps(chunk)}\n\n".encode())
        await response.write(b"data: [DONE]\n\n")
        return response

    async def _embeddings(self, request: web.Request) -> web.Response:
        refused = self._refused_key(request)
        if refused is not None:
            return refused
        body: dict[str, Any] = await request.json()
        inputs = body.get("input")
        inputs = [inputs] if isinstance(inputs, str) else inputs
        if (
            not isinstance(inputs, list)
            or not inputs
            or not all(isinstance(i, str) and i for i in inputs)
        ):
            return _error(
                400,
                "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.",
            )
        unknown = self._unknown_model(body.get("model"))
        if unknown is not None:
            return unknown
        self.embedded.append(inputs)
        dimensions = int(body.get("dimensions") or EMBEDDING_DIMENSIONS)
        data = []
        for index, item in enumerate(inputs):
            vector = embedding_of(item, dimensions)
            encoded: Any = vector
            if body.get("encoding_format") == "base64":
                encoded = base64.b64encode(struct.pack(f"<{dimensions}f", *vector)).decode()
            data.append({"object": "embedding", "index": index, "embedding": encoded})
        tokens = sum(math.ceil(len(i) / CHARS_PER_TOKEN) for i in inputs)
        return web.json_response(
            {
                "object": "list",
                "data": data,
                "model": body["model"],
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            }
        )


def embedding_of(item: str, dimensions: int = EMBEDDING_DIMENSIONS) -> list[float]:
    """The fake's embedding of a text: the same for the same text, unit length."""
    digest = hashlib.sha256(item.encode()).digest()
    raw = [digest[i % len(digest)] - 127.5 for i in range(dimensions)]
    norm = math.sqrt(sum(x * x for x in raw)) or 1.0
    return [x / norm for x in raw]


def _random_id(length: int) -> str:
    return "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(length))


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n
