"""Issue 45 (CPU per turn): a session's requests after its client's first go straight to
aiohttp (`runtime/providers/anthropic_post.py`). What they answer, and how they fail, is what
the SDK's way gives: each failure the same `ProviderError`, word for word."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from aiohttp.test_utils import TestServer

from runtime.errors import ProviderError
from runtime.providers.anthropic import AnthropicProvider
from runtime.providers.base import ProviderRequest, ProviderResponse
from runtime.providers.history import History
from runtime.transcript import TextBlock, TranscriptMessage
from tests.fakes.anthropic_api import FakeAnthropic, Reply, error, text
from tests.runtime.helpers import MODEL

FAILURES = [
    error(429, "rate_limit_error", "slow down", **{"retry-after": "30"}),
    error(529, "overloaded_error", "Overloaded", **{"retry-after-ms": "250"}),
    error(500, "api_error", "Internal server error"),
    error(401, "authentication_error", "invalid x-api-key"),
    error(400, "invalid_request_error", "prompt is too long: 250000 tokens > 200000 maximum"),
    Reply([{"type": "text", "text": "a"}], stream_error="overloaded_error"),
    Reply([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}], stream_cut=True),
]


def ignore(*_: object) -> None:
    """Streamed text and retry notices, where a test does not look at them."""


def request(history: History | None) -> ProviderRequest:
    said = [TranscriptMessage(role="user", blocks=[TextBlock(text="Héllo «there»")])]
    return ProviderRequest(MODEL, "Be brief.", said, [], 256, history=history)


def provider(url: str) -> AnthropicProvider:
    return AnthropicProvider(MODEL, api_key="test-key", base_url=url, max_attempts=1)


async def outcome(claude: AnthropicProvider, history: History | None) -> ProviderResponse | str:
    """The answer, or the error as it would be told."""
    try:
        return await claude.complete(request(history), ignore, ignore)
    except ProviderError as exc:
        return f"{type(exc).__name__} {exc.failure} {exc.status} {exc.retry_after} {exc}"


@pytest.mark.parametrize("reply", FAILURES)
async def test_a_straight_request_fails_as_the_sdk_s_does(
    anthropic_api: FakeAnthropic, reply: Reply
) -> None:
    anthropic_api.script = [reply, text("first"), reply]
    through_sdk, answered = provider(anthropic_api.url), provider(anthropic_api.url)
    try:
        sdk_said = await outcome(through_sdk, History())  # its first request: the SDK's way
        history = History()
        assert isinstance(await outcome(answered, history), ProviderResponse)
        assert answered._poster is not None and answered._poster._sent is not None, "straight"
        assert await outcome(answered, history) == sdk_said
    finally:
        await through_sdk.close()
        await answered.close()
    assert isinstance(sdk_said, str), sdk_said


async def test_a_straight_request_answers_as_the_sdk_s_does(anthropic_api: FakeAnthropic) -> None:
    words = "Voilà: «done» ✓\r\nand a second line, " + "long " * 150
    anthropic_api.responder = lambda body: text(words)
    claude = provider(anthropic_api.url)
    heard: list[str] = []
    history = History()
    try:
        first = await claude.complete(request(history), heard.append, ignore)
        again = await claude.complete(request(history), heard.append, ignore)
    finally:
        await claude.close()
    assert claude._poster is not None and claude._poster._sent is not None
    assert (again.blocks, again.stop_reason) == (first.blocks, first.stop_reason)
    assert "".join(heard) == 2 * words and first.blocks[0] == TextBlock(text=words)
    assert [r["messages"] for r in anthropic_api.requests[1:]] == [
        r["messages"] for r in anthropic_api.requests[:1]
    ]


async def test_a_straight_request_to_a_server_gone_fails_as_the_sdk_s_does(
    aiohttp_server: Callable[..., Awaitable[TestServer]],
) -> None:
    """Both had a connection to the server in their pools when it went."""
    fake = FakeAnthropic()
    fake.responder = lambda body: text("here")
    server = await aiohttp_server(fake.app(), host="127.0.0.1")
    url = str(server.make_url("")).rstrip("/")
    answered, history = provider(url), History()
    through_sdk = provider(url)
    said: dict[str, Any] = {}
    try:
        assert isinstance(await outcome(answered, history), ProviderResponse)
        assert isinstance(await outcome(through_sdk, History()), ProviderResponse)
        await server.close()
        await asyncio.sleep(0.2)  # both pools hear their connection closed
        said["straight"] = await outcome(answered, history)
        said["sdk"] = await outcome(through_sdk, None)  # no history: `messages.create`
    finally:
        await answered.close()
        await through_sdk.close()
    assert said["straight"] == said["sdk"]
    assert "unreachable" in said["sdk"], said
