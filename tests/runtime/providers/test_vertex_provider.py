"""Claude on Google Vertex AI through the SDK's own client (a Bearer access token, the model
in the URL, server-sent events) against the loopback Vertex fake: answers, tools, usage,
ids, and each error's failure."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from aiohttp.test_utils import TestServer as AiohttpServer

from config.errors import CredentialRefused, PlatformUnreachable
from runtime.errors import Failure, ProviderError
from runtime.providers.anthropic import AnthropicProvider, check_claude
from runtime.providers.anthropic_clients import Client, vertex_client
from runtime.providers.base import ProviderRequest, StopReason, Usage
from runtime.tools.base import ToolSpec
from runtime.transcript import TextBlock, ToolResultBlock, ToolUseBlock, TranscriptMessage
from tests.fakes.anthropic_api import Reply, error, text, tools
from tests.fakes.vertex_api import ACCESS_TOKEN, PROJECT, REGION, FakeVertex

MODEL = "claude-sonnet-4-5@20250929"
SLEEP = ToolSpec(
    "sleep", "waits", {"type": "object", "properties": {"seconds": {"type": "number"}}}
)


@pytest.fixture
async def vertex_api(aiohttp_server: Callable[..., Awaitable[AiohttpServer]]) -> FakeVertex:
    fake = FakeVertex()
    server = await aiohttp_server(fake.app(), host="127.0.0.1")
    fake.url = str(server.make_url("")).rstrip("/")
    return fake


def on_vertex(fake: FakeVertex, token: str = ACCESS_TOKEN) -> AnthropicProvider:
    # The token given: google-auth never looks for credentials or refreshes them.
    client = vertex_client(REGION, PROJECT, access_token=token, base_url=f"{fake.url}/v1")
    return AnthropicProvider(MODEL, client=client, max_attempts=1)


def ask(*messages: TranscriptMessage, system: str = "You are a test agent.") -> ProviderRequest:
    return ProviderRequest(MODEL, system, list(messages), [SLEEP], 1024)


def user(words: str) -> TranscriptMessage:
    return TranscriptMessage(role="user", blocks=[TextBlock(text=words)])


def ignore(*_: object) -> None:
    """Streamed text and retry notices, where a test does not look at them."""


async def test_an_answer_streams_in_pieces(vertex_api: FakeVertex, cleanup: list[object]) -> None:
    vertex_api.script = [text("The quick brown fox jumps over the lazy dog.")]
    provider = on_vertex(vertex_api)
    cleanup.append(provider)
    pieces: list[str] = []
    answer = await provider.complete(ask(user("tell me")), pieces.append, ignore)
    assert answer.text() == "The quick brown fox jumps over the lazy dog."
    assert len(pieces) > 3 and "".join(pieces) == answer.text()
    assert answer.stop_reason is StopReason.END_TURN
    [path] = vertex_api.paths
    assert path == (
        f"/v1/projects/{PROJECT}/locations/{REGION}/publishers/anthropic/models/"
        f"{MODEL}:streamRawPredict"
    )
    [body] = vertex_api.requests
    assert body["anthropic_version"] == "vertex-2023-10-16" and "model" not in body
    assert body["stream"] is True and vertex_api.refused == []


async def test_a_tool_call_and_its_result_over_two_rounds(
    vertex_api: FakeVertex, cleanup: list[object]
) -> None:
    vertex_api.script = [tools(("sleep", {"seconds": 0}), say="One moment."), text("Rested.")]
    provider = on_vertex(vertex_api)
    cleanup.append(provider)
    transcript = [user("rest a moment")]
    first = await provider.complete(ask(*transcript), ignore, ignore)
    assert first.stop_reason is StopReason.TOOL_USE and first.text() == "One moment."
    [call] = first.tool_uses()
    assert call.name == "sleep" and call.input == {"seconds": 0}
    transcript.append(TranscriptMessage(role="assistant", blocks=first.blocks))
    result = ToolResultBlock(tool_use_id=call.id, content="slept 0 s")
    transcript.append(TranscriptMessage(role="user", blocks=[result]))
    second = await provider.complete(ask(*transcript), ignore, ignore)
    assert second.text() == "Rested." and vertex_api.refused == []
    [sent] = vertex_api.tool_results()
    assert sent["tool_use_id"] == call.id, "Vertex's own ids are kept"


async def test_usage_reports_what_the_cache_wrote_and_then_read(
    vertex_api: FakeVertex, cleanup: list[object]
) -> None:
    provider = on_vertex(vertex_api)
    cleanup.append(provider)
    system = "You are a test agent. " * 200
    first = await provider.complete(ask(user("hello"), system=system), ignore, ignore)
    second = await provider.complete(ask(user("hello"), system=system), ignore, ignore)
    written, read = vertex_api.usages
    assert first.usage == Usage(
        input_tokens=written["input_tokens"],
        output_tokens=written["output_tokens"],
        cache_read_tokens=0,
        cache_write_tokens=written["cache_creation_input_tokens"],
    )
    assert first.usage.cache_write_tokens > 1000
    assert second.usage.cache_read_tokens == read["cache_read_input_tokens"] > 1000
    assert second.usage.request_tokens == first.usage.request_tokens


async def test_ids_of_tool_calls_made_elsewhere_are_sent_in_anthropics_shape(
    vertex_api: FakeVertex, cleanup: list[object]
) -> None:
    transcript = [user("two things")]
    for tool_id in ("call.abc:1", "fc_" + "7" * 67):
        call = ToolUseBlock(id=tool_id, name="sleep", input={"seconds": 0})
        transcript.append(TranscriptMessage(role="assistant", blocks=[call]))
        result = ToolResultBlock(tool_use_id=tool_id, content="slept")
        transcript.append(TranscriptMessage(role="user", blocks=[result]))
    vertex_api.script = [text("Both done.")]
    provider = on_vertex(vertex_api)
    cleanup.append(provider)
    answer = await provider.complete(ask(*transcript), ignore, ignore)
    assert answer.text() == "Both done." and vertex_api.refused == []
    calls = [m["content"][0]["id"] for m in vertex_api.requests[0]["messages"][1::2]]
    assert [b["tool_use_id"] for b in vertex_api.tool_results()] == calls
    assert len(set(calls)) == 2 and all(len(i) <= 64 for i in calls)


QUOTA = "Quota exceeded for aiplatform.googleapis.com/online_prediction_requests_per_base_model"


@pytest.mark.parametrize(
    "reply,failure,retry_after",
    [
        (error(429, "RESOURCE_EXHAUSTED", QUOTA, **{"Retry-After": "12"}), "rate_limited", 12),
        (
            error(429, "rate_limit_error", "slow down", **{"retry-after-ms": "1500"}),
            "rate_limited",
            1.5,
        ),
        (error(503, "UNAVAILABLE", "The service is currently unavailable."), "overloaded", None),
        (error(529, "overloaded_error", "Overloaded"), Failure.OVERLOADED, None),
        (error(403, "PERMISSION_DENIED", "Permission denied on the model"), Failure.AUTH, None),
        (
            Reply([{"type": "text", "text": "a"}], stream_error="overloaded_error"),
            "overloaded",
            None,
        ),
    ],
)
async def test_each_error_is_mapped_to_its_failure_with_the_wait_asked_for(
    vertex_api: FakeVertex, reply: Reply, failure: Failure, retry_after: float | None
) -> None:
    vertex_api.script = [reply]
    provider = on_vertex(vertex_api)
    with pytest.raises(ProviderError) as raised:
        await provider.complete(ask(user("hi")), ignore, ignore)
    await provider.close()
    assert raised.value.failure == failure and raised.value.retry_after == retry_after
    assert raised.value.retryable is (failure != Failure.AUTH)
    assert "Google Vertex AI" in str(raised.value) and len(vertex_api.requests) == 1


async def test_a_token_vertex_does_not_know_is_an_auth_failure(vertex_api: FakeVertex) -> None:
    provider = on_vertex(vertex_api, token="ya29.expired")
    with pytest.raises(ProviderError) as raised:
        await provider.complete(ask(user("hi")), ignore, ignore)
    await provider.close()
    assert raised.value.failure is Failure.AUTH and raised.value.status == 401
    assert "UNAUTHENTICATED" in str(raised.value) and vertex_api.requests == []


async def test_the_probe_asks_for_one_token_and_tells_refused_from_busy(
    vertex_api: FakeVertex,
) -> None:
    def client(token: str = ACCESS_TOKEN) -> Client:
        return vertex_client(REGION, PROJECT, access_token=token, base_url=f"{vertex_api.url}/v1")

    assert await check_claude(client(), MODEL) == f"model {MODEL} on Google Vertex AI"
    assert vertex_api.requests[0]["max_tokens"] == 1 and "stream" not in vertex_api.requests[0]
    with pytest.raises(CredentialRefused, match="UNAUTHENTICATED"):
        await check_claude(client("ya29.expired"), MODEL)
    vertex_api.script = [error(429, "RESOURCE_EXHAUSTED", QUOTA)]
    with pytest.raises(PlatformUnreachable, match="RESOURCE_EXHAUSTED"):
        await check_claude(client(), MODEL)


async def test_credentials_google_auth_cannot_load_are_the_keys_failure(
    vertex_api: FakeVertex, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """No token given: google-auth's application default credentials are loaded, here from
    a file that is not there; nothing is sent."""
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "adc.json"))
    client = vertex_client(REGION, PROJECT, base_url=f"{vertex_api.url}/v1")
    provider = AnthropicProvider(MODEL, client=client, max_attempts=3)
    with pytest.raises(ProviderError) as raised:
        await provider.complete(ask(user("hi")), ignore, ignore)
    await provider.close()
    assert raised.value.failure is Failure.AUTH and not raised.value.retryable
    assert "adc.json" in str(raised.value) and vertex_api.requests == []
