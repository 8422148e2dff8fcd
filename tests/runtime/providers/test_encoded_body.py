"""A session's requests, encoded from its kept history (each message encoded once), reach the
Messages API byte for byte as the SDK's `messages.create` sends the same params: the same
body, the same headers, round after round, with a summary, files and tool calls."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestServer

from runtime.providers import ProviderRequest
from runtime.providers.anthropic import AnthropicProvider
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
