"""The oracle the OpenAI-compatible provider is tested against: the fake refuses what the
Chat Completions API refuses, in its words, and streams as it streams."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestServer

from tests.fakes.openai_api import FakeOpenAI, tools
from tests.fakes.openai_rules import NINE_ALNUM_IDS, OPENAI_IDS, InvalidRequest, check_chat_request

Serve = Callable[..., Awaitable[TestServer]]
PNG_URL = "data:image/png;base64,iVBORw0KGgo="


def _call(id_: str, name: str = "sleep") -> dict[str, Any]:
    return {"id": id_, "type": "function", "function": {"name": name, "arguments": "{}"}}


def _body(*messages: dict[str, Any], **kw: Any) -> dict[str, Any]:
    return {"model": "gpt-4.1-mini", "messages": list(messages), **kw}


USER = {"role": "user", "content": "hi"}
ASKS = {"role": "assistant", "content": None, "tool_calls": [_call("call_a"), _call("call_b")]}


def _answer(id_: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": id_, "content": "done"}


REFUSED = [
    (
        _body(USER, _answer("call_a")),
        "must be a response to a preceeding message with 'tool_calls'",
    ),
    (_body(USER, ASKS, _answer("call_a"), USER), "did not have response messages: call_b"),
    (_body(USER, ASKS, _answer("call_a")), "did not have response messages: call_b"),
    (_body(USER, ASKS, _answer("call_a"), _answer("call_x")), "'call_x' not found in 'tool_calls'"),
    (_body(USER, ASKS, _answer("call_a"), USER, _answer("call_b")), "did not have response"),
    (_body(USER, {"role": "assistant", "content": None}), "expected a string, got null"),
    (_body({"role": "bot", "content": "hi"}), "Invalid value: 'bot'"),
    (_body(), "Invalid 'messages': empty array"),
    (
        _body(USER, {"role": "assistant", "content": None, "tool_calls": [_call("c" * 65)]}),
        "string too long. Expected a string with maximum length 64",
    ),
    (
        _body(
            USER,
            {
                "role": "assistant",
                "tool_calls": [{**_call("c"), "function": {"name": "x", "arguments": {}}}],
            },
        ),
        "function.arguments': expected a string",
    ),
    (
        _body(USER, tools=[{"function": {"name": "x"}}]),
        "Missing required parameter: 'tools[0].type'",
    ),
    (
        _body(USER, tools=[{"type": "function", "function": {"name": "a b"}}]),
        "tools[0].function.name': string does not match pattern",
    ),
    (
        _body(
            USER,
            tools=[
                {"type": "function", "function": {"name": "x", "parameters": {"type": "array"}}}
            ],
        ),
        "schema must be a JSON Schema of 'type: \"object\"'",
    ),
    (
        _body(
            {
                "role": "user",
                "content": [
                    {"type": "image_url", "image_url": {"url": "data:text/html;base64,AA=="}}
                ],
            }
        ),
        "Expected a base64-encoded data URL",
    ),
    (
        _body({"role": "tool", "tool_call_id": "x", "content": [{"type": "image_url"}]}),
        "preceeding",
    ),
    (
        _body(
            USER,
            ASKS,
            {
                **_answer("call_a"),
                "content": [{"type": "image_url", "image_url": {"url": PNG_URL}}],
            },
        ),
        "Invalid value: 'image_url'",
    ),
    (_body(USER, stream_options={"include_usage": True}), "only allowed when 'stream' is enabled"),
    ({"model": "o4-mini", "messages": [USER], "max_tokens": 5}, "Use 'max_completion_tokens'"),
]


@pytest.mark.parametrize(("body", "said"), REFUSED)
def test_what_the_api_refuses_is_refused(body: dict[str, Any], said: str) -> None:
    with pytest.raises(InvalidRequest) as caught:
        check_chat_request(body)
    assert said in str(caught.value)


def test_what_the_api_takes_passes() -> None:
    picture = {"type": "image_url", "image_url": {"url": PNG_URL}}
    check_chat_request(
        _body(
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": [{"type": "text", "text": "see"}, picture]},
            ASKS,
            _answer("call_b"),
            _answer("call_a"),
            {"role": "user", "content": [picture]},
            {"role": "assistant", "content": "A picture."},
            tools=[
                {
                    "type": "function",
                    "function": {"name": "sleep", "parameters": {"type": "object"}},
                }
            ],
            stream=True,
            stream_options={"include_usage": True},
        )
    )


def test_a_server_of_nine_alphanumerics_refuses_other_ids() -> None:
    asks = {"role": "assistant", "content": None, "tool_calls": [_call("abc123XYZ")]}
    check_chat_request(_body(USER, asks, _answer("abc123XYZ")), NINE_ALNUM_IDS)
    check_chat_request(_body(USER, ASKS, _answer("call_a"), _answer("call_b")), OPENAI_IDS)
    with pytest.raises(
        InvalidRequest, match="call_a but must be a-z, A-Z, 0-9, with a length of 9"
    ):
        check_chat_request(_body(USER, ASKS, _answer("call_a"), _answer("call_b")), NINE_ALNUM_IDS)


async def test_the_stream_is_the_chunk_sequence_the_api_sends(aiohttp_server: Serve) -> None:
    fake = FakeOpenAI()
    fake.script = [tools(("sleep", {"seconds": 1}), say="Waiting now.")]
    server = await aiohttp_server(fake.app(), host="127.0.0.1")
    body = _body(USER, stream=True, stream_options={"include_usage": True})
    async with (
        aiohttp.ClientSession() as session,
        session.post(
            server.make_url("/v1/chat/completions"),
            json=body,
            headers={"Authorization": "Bearer k"},
        ) as response,
    ):
        lines = [line.decode().strip() async for line in response.content]
    data = [line.removeprefix("data: ") for line in lines if line]
    assert data[-1] == "[DONE]"
    chunks = [json.loads(d) for d in data[:-1]]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    deltas = [c["choices"][0]["delta"] for c in chunks[:-1]]
    assert deltas[0] == {"role": "assistant", "content": "", "refusal": None}
    assert "".join(d.get("content") or "" for d in deltas) == "Waiting now."
    calls = [d["tool_calls"][0] for d in deltas if "tool_calls" in d]
    assert calls[0]["index"] == 0 and calls[0]["id"].startswith("call_")
    assert calls[0]["function"] == {"name": "sleep", "arguments": ""}
    assert "".join(c["function"]["arguments"] for c in calls) == '{"seconds": 1}'
    assert all("id" not in c for c in calls[1:])
    assert chunks[-2]["choices"][0] == {
        "index": 0,
        "delta": {},
        "logprobs": None,
        "finish_reason": "tool_calls",
    }
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["prompt_tokens"] > 0
    assert all(c["usage"] is None for c in chunks[:-1])


async def test_a_wrong_key_gets_the_apis_401(aiohttp_server: Serve) -> None:
    fake = FakeOpenAI()
    fake.api_key = "sk-right"
    server = await aiohttp_server(fake.app(), host="127.0.0.1")
    async with (
        aiohttp.ClientSession() as session,
        session.get(
            server.make_url("/v1/models/gpt-4o"), headers={"Authorization": "Bearer sk-wrong"}
        ) as response,
    ):
        assert response.status == 401
        error = (await response.json())["error"]
    assert error["code"] == "invalid_api_key" and set(error) == {"message", "type", "param", "code"}
