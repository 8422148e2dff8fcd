"""A Messages API request's body encoded from what the session's `History` kept: the
messages before the last are encoded once each and kept joined, so a round encodes what is new
and copies the rest once, into the body.

The bytes are the SDK's own for the same params (its encoder's settings, its key order:
`messages.create` puts max_tokens, messages, model, stream, system, tools in that order);
tests/runtime/providers/test_encoded_body.py holds them to the SDK's. They go to the SDK's
`post` as the body (`content`), which skips its copy of every message dict before encoding
them. Anthropic's API only: Bedrock's and Vertex's clients rewrite the body's fields.
"""

from __future__ import annotations

import json
from contextlib import AbstractAsyncContextManager
from typing import Any

import anthropic
from anthropic._constants import RAW_RESPONSE_HEADER
from anthropic._response import AsyncResponseContextManager

from runtime.providers.anthropic_clients import SdkClient
from runtime.providers.base import ProviderRequest
from runtime.providers.history import same_prefix
from runtime.providers.lowered_history import KEY, Lowered
from runtime.tools.base import ToolSpec

ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
SENT = ("model", "max_tokens", "messages", "system", "tools")  # what lowering gives
TAILS = 16  # body tails kept: one an agent (its model, system prompt and tools), not a session
# The body's tail (model, stream, system, tools) by what it is made of: the same model, system
# prompt and tool objects (never changed once made) give the same bytes, so it is encoded once,
# not each round. The tools are held with it, so the ids in its key stay theirs.
_tails: dict[tuple[str, str, tuple[int, ...]], tuple[list[ToolSpec], str]] = {}


def encoded_body(request: ProviderRequest, params: dict[str, Any]) -> bytes | None:
    """The body for `params` (just lowered from `request`); None when the history holds no
    lowering of it (the whole request was lowered: send `params` the SDK's way)."""
    kept = request.history.kept.get(KEY) if request.history is not None else None
    if not isinstance(kept, Lowered) or not set(params) <= set(SENT):
        return None
    lowered, sent = kept.lowered, params["messages"]
    if len(lowered) != len(sent) or same_prefix(lowered, sent) < len(sent) - 1:
        return None  # not the lowering these params were made from
    before = kept.encoded
    before.keep(min(kept.start, len(lowered) - 1))
    for message in lowered[len(before.ends) : len(lowered) - 1]:
        before.add(ENCODER.encode(message).encode())
    head = ENCODER.encode({"max_tokens": params["max_tokens"]})[:-1]
    last = ENCODER.encode(sent[-1])
    return b"".join(
        (
            f'{head},"messages":['.encode(),
            before.joined,
            b"," if before.ends else b"",
            f"{last}],{_tail(request, params)}".encode(),
        )
    )


def _tail(request: ProviderRequest, params: dict[str, Any]) -> str:
    """`params`' model, stream, system and tools, encoded (without the opening brace)."""
    key = (request.model, request.system, tuple(map(id, request.tools)))
    kept = _tails.get(key)
    if kept is None:
        rest = {"model": params["model"], "stream": True}
        rest.update((k, params[k]) for k in ("system", "tools") if k in params)
        if len(_tails) >= TAILS:
            _tails.clear()
        kept = _tails[key] = (list(request.tools), ENCODER.encode(rest)[1:])
    return kept[1]


def posted(sdk: SdkClient, body: bytes) -> AbstractAsyncContextManager[Any]:
    """The streamed response to `body` sent as `messages.with_streaming_response.create`
    sends its own: the same path, headers and stream, with the body as it is."""
    response = sdk.post(
        "/v1/messages",
        cast_to=anthropic.types.Message,
        content=body,
        options={"headers": {RAW_RESPONSE_HEADER: "stream"}},
        stream=True,
        stream_cls=anthropic.AsyncStream[anthropic.types.RawMessageStreamEvent],
    )
    return AsyncResponseContextManager(response)
