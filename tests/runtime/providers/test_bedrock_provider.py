"""Claude on Amazon Bedrock through the SDK's own client (signed with SigV4, its stream in
AWS event-stream frames) against the loopback Bedrock fake: answers, tools, usage, ids."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from aiohttp.test_utils import TestServer as AiohttpServer

from runtime.agents import AgentSpec
from runtime.engine import Runtime
from runtime.providers.anthropic import AnthropicProvider
from runtime.providers.anthropic_clients import bedrock_client
from runtime.providers.base import ProviderRequest, StopReason, Usage
from runtime.records import RunStatus
from runtime.tools.base import ToolSpec
from runtime.transcript import TextBlock, ToolResultBlock, ToolUseBlock, TranscriptMessage
from tests.fakes.anthropic_api import text, tools
from tests.fakes.bedrock_api import ACCESS_KEY, SECRET_KEY, FakeBedrock
from tests.runtime.helpers import operator

MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"  # an inference profile, as Bedrock names
SLEEP = ToolSpec(
    "sleep", "waits", {"type": "object", "properties": {"seconds": {"type": "number"}}}
)


@pytest.fixture
async def bedrock_api(
    aiohttp_server: Callable[..., Awaitable[AiohttpServer]], monkeypatch: pytest.MonkeyPatch
) -> FakeBedrock:
    monkeypatch.delenv("AWS_BEARER_TOKEN_BEDROCK", raising=False)  # would replace SigV4
    fake = FakeBedrock(region="eu-west-1")
    server = await aiohttp_server(fake.app(), host="127.0.0.1")
    fake.url = str(server.make_url("")).rstrip("/")
    return fake


def on_bedrock(fake: FakeBedrock) -> AnthropicProvider:
    client = bedrock_client(
        "eu-west-1", access_key=ACCESS_KEY, secret_key=SECRET_KEY, base_url=fake.url
    )
    return AnthropicProvider(MODEL, client=client, max_attempts=1)


def ignore(*_: object) -> None:
    """Streamed text and retry notices, where a test does not look at them."""


def ask(*messages: TranscriptMessage, system: str = "You are a test agent.") -> ProviderRequest:
    return ProviderRequest(MODEL, system, list(messages), [SLEEP], 1024)


def user(words: str) -> TranscriptMessage:
    return TranscriptMessage(role="user", blocks=[TextBlock(text=words)])


async def test_an_answer_streams_in_pieces_from_a_signed_request(
    bedrock_api: FakeBedrock, cleanup: list[object]
) -> None:
    bedrock_api.script = [text("The quick brown fox jumps over the lazy dog.")]
    provider = on_bedrock(bedrock_api)
    cleanup.append(provider)
    pieces: list[str] = []
    answer = await provider.complete(ask(user("tell me")), pieces.append, ignore)
    assert answer.text() == "The quick brown fox jumps over the lazy dog."
    assert len(pieces) > 3 and "".join(pieces) == answer.text()
    assert answer.stop_reason is StopReason.END_TURN
    [path] = bedrock_api.paths
    assert path == f"/model/{MODEL}/invoke-with-response-stream"
    [body] = bedrock_api.requests
    assert body["anthropic_version"] == "bedrock-2023-05-31" and "model" not in body
    assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert bedrock_api.refused == []


async def test_a_tool_call_and_its_result_over_two_rounds_of_a_turn(
    bedrock_api: FakeBedrock, db_path: Path, cleanup: list[object]
) -> None:
    bedrock_api.script = [tools(("sleep", {"seconds": 0}), say="One moment."), text("Rested.")]
    agent = AgentSpec("assistant", "You are a test agent.", ("sleep",))
    rt = await Runtime.open(db_path, provider=on_bedrock(bedrock_api), agents=[agent])
    cleanup.append(rt)
    sid = await rt.create_session("assistant")
    await rt.submit(sid, operator("rest a moment"))
    await rt.wait_idle()
    [run] = await rt.store.runs(session_id=sid)
    assert run.status is RunStatus.COMPLETED and run.final_text == "Rested."
    assert bedrock_api.refused == [] and len(bedrock_api.requests) == 2
    [call] = await rt.store.tool_calls()
    assert call.name == "sleep" and call.input == {"seconds": 0}
    [result] = bedrock_api.tool_results()
    assert result["tool_use_id"] == bedrock_api.requests[1]["messages"][1]["content"][1]["id"]
    assert result["tool_use_id"].startswith("toolu_"), "Bedrock's own ids are kept"


async def test_usage_reports_what_the_cache_wrote_and_then_read(
    bedrock_api: FakeBedrock, cleanup: list[object]
) -> None:
    provider = on_bedrock(bedrock_api)
    cleanup.append(provider)
    system = "You are a test agent. " * 200
    first = await provider.complete(ask(user("hello"), system=system), ignore, ignore)
    second = await provider.complete(ask(user("hello"), system=system), ignore, ignore)
    written, read = bedrock_api.usages
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
    bedrock_api: FakeBedrock, cleanup: list[object]
) -> None:
    """A turn that began on another provider: its ids `call.abc:1` (not Anthropic's
    alphabet) and one of 70 characters reach Bedrock legally, each result still answering
    its call."""
    long_id = "call_" + "x" * 65
    transcript = [user("two things")]
    for tool_id in ("call.abc:1", long_id):
        call = ToolUseBlock(id=tool_id, name="sleep", input={"seconds": 0})
        transcript.append(TranscriptMessage(role="assistant", blocks=[call]))
        result = ToolResultBlock(tool_use_id=tool_id, content="slept")
        transcript.append(TranscriptMessage(role="user", blocks=[result]))
    bedrock_api.script = [text("Both done."), text("Both done.")]
    provider = on_bedrock(bedrock_api)
    cleanup.append(provider)
    answer = await provider.complete(ask(*transcript), ignore, ignore)
    assert answer.text() == "Both done." and bedrock_api.refused == []
    sent = bedrock_api.requests[0]["messages"]
    calls = [m["content"][0]["id"] for m in sent if m["role"] == "assistant"]
    answered = [b["tool_use_id"] for b in bedrock_api.tool_results()]
    assert answered == calls and len(set(calls)) == 2
    assert all(len(i) <= 64 for i in calls) and "call.abc:1" not in calls
    again = await provider.complete(ask(*transcript), ignore, ignore)
    assert again.text() == "Both done."
    assert [m["content"][0]["id"] for m in bedrock_api.requests[1]["messages"][1::2]] == calls
