"""A session's requests, encoded from its kept history (each message encoded once), reach the
Messages API byte for byte as the SDK's `messages.create` sends the same params: the same
body, the same headers, round after round, with a summary, files and tool calls."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from runtime.providers import anthropic_body
from runtime.providers.anthropic import AnthropicProvider, lower_request
from runtime.providers.base import ProviderRequest
from runtime.providers.history import History
from runtime.tools.base import ToolSpec
from runtime.transcript import (
    AttachmentBlock,
    AttachmentForm,
    Block,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    TranscriptMessage,
)
from tests.fakes.anthropic_api import FakeAnthropic, text
from tests.files_samples import png

SLEEP = ToolSpec("sleep", "waits", {"type": "object", "properties": {"s": {"type": "number"}}})
IMAGE = png()
PICTURE = AttachmentBlock(
    id="att1", name="a.png", media_type="image/png", form=AttachmentForm.IMAGE, size=len(IMAGE)
)
VARYING = {"content-length", "host", "x-stainless-async"}  # same: checked apart, or the port


def _rows(n: int) -> list[TranscriptMessage]:
    """A session's rows after `n` rounds: a tool call and its result, words (non-ASCII
    too), a picture now and then."""
    rows = [TranscriptMessage(role="user", blocks=[TextBlock(text="Begin — «here» ✓")])]
    for i in range(n):
        call = ToolUseBlock(id=f"toolu_{i}", name="sleep", input={"s": i, "why": 'é\n\t"q"'})
        rows.append(TranscriptMessage(role="assistant", blocks=[TextBlock(text=f"ok {i}"), call]))
        words: list[Block] = [ToolResultBlock(tool_use_id=f"toolu_{i}", content=f"slept {i}")]
        words.append(PICTURE if i % 3 == 2 else TextBlock(text=f"next {i} ☃"))
        rows.append(TranscriptMessage(role="user", blocks=words))
    return rows


async def test_bodies_encoded_from_the_history_are_the_sdk_s_bytes(
    aiohttp_server: Callable[..., Awaitable[TestServer]],
) -> None:
    fake = FakeAnthropic()
    fake.responder = lambda body: text("fine")
    seen: list[tuple[bytes, dict[str, str]]] = []

    @web.middleware
    async def capture(request: web.Request, handler: Any) -> web.StreamResponse:
        headers = {k.lower(): v for k, v in request.headers.items() if k.lower() not in VARYING}
        seen.append((await request.read(), headers))
        response: web.StreamResponse = await handler(request)
        return response

    app = fake.app()
    app.middlewares.append(capture)
    server = await aiohttp_server(app, host="127.0.0.1")
    url = str(server.make_url("")).rstrip("/")
    kept, whole = (AnthropicProvider("claude-test-model", api_key="k", base_url=url) for _ in "ab")
    history = History()
    rows = _rows(8)
    try:
        for end in range(1, len(rows) + 1, 2):
            for summary in (None, "Earlier: the operator asked for «sleep»."):
                fields: dict[str, Any] = {
                    "model": "claude-test-model",
                    "system": "Be brief.",
                    "messages": rows[:end],
                    "tools": [SLEEP],
                    "max_tokens": 100,
                    "summary": summary,
                    "files": {"att1": IMAGE},
                }
                await kept.complete(
                    ProviderRequest(**fields, history=history), lambda _: None, lambda *_: None
                )
                await whole.complete(ProviderRequest(**fields), lambda _: None, lambda *_: None)
                (ours, our_headers), (sdk, sdk_headers) = seen[-2:]
                assert ours == sdk, f"round {end}: the bodies differ"
                assert our_headers == sdk_headers
    finally:
        await kept.close()
        await whole.close()
    assert not fake.refused
    assert history.kept, "the history was kept (the encoded path was taken)"


def test_a_bodys_model_system_and_tools_are_encoded_once_per_agent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 45 (CPU per turn): a round of an agent whose model, system prompt and tools were
    encoded before encodes none of them again; another agent's are its own."""
    encoded: list[Any] = []
    encode = anthropic_body.ENCODER.encode

    class Counting:
        def encode(self, value: Any) -> str:
            encoded.append(value)
            return encode(value)

    monkeypatch.setattr(anthropic_body, "ENCODER", Counting())
    wait = ToolSpec("wait", "waits too", {"type": "object"})

    def body(system: str, tools: list[ToolSpec]) -> dict[str, Any]:
        request = ProviderRequest(
            model="claude-test-model",
            system=system,
            messages=_rows(1),
            tools=tools,
            max_tokens=100,
            history=History(),
        )
        sent = anthropic_body.encoded_body(request, lower_request(request))
        assert sent is not None
        return dict(json.loads(sent))

    first = body("Be brief.", [SLEEP])
    encoded.clear()
    assert body("Be brief.", [SLEEP]) == first
    assert not [v for v in encoded if isinstance(v, dict) and "tools" in v], "not again"
    other = body("Be thorough.", [SLEEP, wait])
    assert other["system"][0]["text"] == "Be thorough."
    assert [t["name"] for t in other["tools"]] == ["sleep", "wait"]
    assert body("Be brief.", [wait])["tools"][0]["name"] == "wait"
