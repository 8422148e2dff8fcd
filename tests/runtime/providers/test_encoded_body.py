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
from runtime.providers.lowered_history import KEY, Lowered
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


async def _sent_as_the_sdk_sends(
    aiohttp_server: Callable[..., Awaitable[TestServer]],
    rounds: list[tuple[list[TranscriptMessage], dict[str, bytes]]],
) -> None:
    """Each round's rows (and the files they name) sent with one kept history and without
    one, with and without a summary: the same bytes and headers reach the API each time."""
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
    try:
        for summary in (None, "Earlier: the operator asked for «sleep»."):
            history = History()  # a session's: kept from one round to the next
            reused = 0  # rounds that lowered only what changed
            for number, (rows, files) in enumerate(rounds):
                fields: dict[str, Any] = {
                    "model": "claude-test-model",
                    "system": "Be brief.",
                    "messages": rows,
                    "tools": [SLEEP],
                    "max_tokens": 100,
                    "summary": summary,
                    "files": files,
                }
                await kept.complete(
                    ProviderRequest(**fields, history=history), lambda _: None, lambda *_: None
                )
                await whole.complete(ProviderRequest(**fields), lambda _: None, lambda *_: None)
                (ours, our_headers), (sdk, sdk_headers) = seen[-2:]
                assert ours == sdk, f"round {number}, summary {summary!r}: the bodies differ"
                assert our_headers == sdk_headers
                lowered = history.kept.get(KEY)
                assert isinstance(lowered, Lowered), "the history was kept"
                reused += lowered.start > 0
            assert reused >= len(rounds) // 2, "later rounds reused what the history kept"
    finally:
        await kept.close()
        await whole.close()
    assert not fake.refused


async def test_bodies_encoded_from_the_history_are_the_sdk_s_bytes(
    aiohttp_server: Callable[..., Awaitable[TestServer]],
) -> None:
    rows = _rows(8)
    rounds = [(rows[:end], {"att1": IMAGE}) for end in range(1, len(rows) + 1, 2)]
    await _sent_as_the_sdk_sends(aiohttp_server, rounds)


async def test_a_changed_message_before_the_last_is_encoded_again(
    aiohttp_server: Callable[..., Awaitable[TestServer]],
) -> None:
    """What was kept is cut back where the rows changed: a row before the last replaced (as a
    repair would), a picture's bytes missing and then found, and rows appended after each."""
    rows = _rows(6)
    answered = [ToolResultBlock(tool_use_id="toolu_0", content="slept longer ✓")]
    edited = [*rows[:2], TranscriptMessage(role="user", blocks=answered)]
    rounds = [
        (rows[:9], {}),  # the pictures' bytes missing: their messages say so
        (rows[:11], {"att1": IMAGE}),  # found: those messages are lowered again
        (rows[:13], {"att1": IMAGE}),
        ([*edited, *rows[3:13]], {"att1": IMAGE}),  # the third row is another now
        ([*edited, *rows[3:]], {"att1": IMAGE}),
        (rows[:5], {"att1": IMAGE}),  # shorter than what was kept
    ]
    await _sent_as_the_sdk_sends(aiohttp_server, rounds)


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
