"""Prompt caching and the context window, through the real SDK against the fake API."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anthropic
import pytest

from runtime.errors import ContextWindowExceededError
from runtime.prompts import SUMMARY_HEADER
from runtime.providers.anthropic import AnthropicProvider, lower_request
from runtime.providers.base import ProviderRequest, ProviderResponse, Usage
from runtime.records import RunStatus
from runtime.tools.base import ToolSpec
from runtime.transcript import TextBlock, ToolResultBlock, TranscriptMessage
from tests.fakes.anthropic_api import FakeAnthropic, text, tools
from tests.fakes.anthropic_tokens import segments
from tests.runtime.helpers import MODEL, open_runtime, operator, provider_for

SYSTEM = "You are a test agent."
CACHED = {"type": "ephemeral"}
TOOLS = [
    ToolSpec(name, f"the {name} tool", {"type": "object", "properties": {}})
    for name in ("sleep", "notify_operator")
]


def user(said: str) -> TranscriptMessage:
    return TranscriptMessage(role="user", blocks=[TextBlock(text=said)])


def request(*messages: TranscriptMessage, summary: str | None = None) -> ProviderRequest:
    return ProviderRequest(MODEL, SYSTEM, list(messages), TOOLS, 100, summary=summary)


async def complete(provider: AnthropicProvider, req: ProviderRequest) -> ProviderResponse:
    return await provider.complete(req, lambda _: None, lambda *_: None)


def breakpoints(body: dict[str, Any]) -> list[str]:
    """Where a request's cache_control marks are: tool names, "system", or message texts."""
    marked = [t["name"] for t in body.get("tools", []) if "cache_control" in t]
    marked += ["system" for b in body.get("system", []) if "cache_control" in b]
    for message in body["messages"]:
        for block in message["content"]:
            if "cache_control" in block:
                marked.append(block.get("text") or block.get("content") or block["type"])
    return marked


def usage_of(answer: dict[str, int]) -> Usage:
    return Usage(
        answer["input_tokens"],
        answer["output_tokens"],
        answer["cache_read_input_tokens"],
        answer["cache_creation_input_tokens"],
    )


async def test_the_second_round_of_a_turn_reads_the_first_from_the_cache(
    anthropic_api: FakeAnthropic, cleanup: list[object]
) -> None:
    provider = provider_for(anthropic_api)
    cleanup.append(provider)
    anthropic_api.script = [tools(("sleep", {"seconds": 0})), text("done")]
    first_request = request(user("nap, then report"))
    first = await complete(provider, first_request)
    assert first.usage.cache_read_tokens == 0
    assert first.usage.cache_write_tokens == first.usage.request_tokens > 0
    [use] = first.tool_uses()
    answered = TranscriptMessage(
        role="user", blocks=[ToolResultBlock(tool_use_id=use.id, content="slept 0s")]
    )
    second_request = request(
        *first_request.messages, TranscriptMessage(role="assistant", blocks=first.blocks), answered
    )
    second = await complete(provider, second_request)
    assert second.usage.cache_read_tokens == first.usage.request_tokens
    assert second.usage.cache_write_tokens > 0, "the new round is written for the next one"
    assert [usage_of(u) for u in anthropic_api.usages] == [first.usage, second.usage]
    assert [breakpoints(b) for b in anthropic_api.requests] == [
        ["notify_operator", "system", "nap, then report"],
        ["notify_operator", "system", "slept 0s"],
    ]


async def test_each_round_and_turn_of_a_session_reads_the_history_from_the_cache(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    anthropic_api.script = [tools(("sleep", {"seconds": 0})), text("done"), text("again")]
    rt = await open_runtime(db_path, anthropic_api)
    cleanup.append(rt)
    sid = await rt.create_session("assistant")
    for prompt in ("nap", "once more"):
        await rt.submit(sid, operator(prompt))
        await rt.wait_idle()
    first, *later = anthropic_api.usages
    assert len(later) == 2 and first["cache_read_input_tokens"] == 0
    assert all(u["cache_read_input_tokens"] > 0 for u in later)
    total = [usage_of(u).request_tokens for u in anthropic_api.usages]
    assert [u["cache_read_input_tokens"] for u in later] == total[:2], "all of the last request"
    assert anthropic_api.refused == []


async def test_the_summary_is_sent_first_and_cached(
    anthropic_api: FakeAnthropic, cleanup: list[object]
) -> None:
    provider = provider_for(anthropic_api)
    cleanup.append(provider)
    summary = "The operator wants the nightly build fixed; the cause is a stale cache."
    await complete(provider, request(user("what is left?"), summary=summary))
    body = anthropic_api.requests[0]
    opening, prompt = body["messages"][0]["content"]
    assert opening["text"] == f"{SUMMARY_HEADER}\n{summary}" and prompt["text"] == "what is left?"
    assert breakpoints(body) == ["notify_operator", "system", opening["text"], "what is left?"]
    # The next turn's rows differ from the first one on; the summary's prefix still hits.
    second = await complete(provider, request(user("and now?"), summary=summary))
    to_summary = segments(anthropic_api.requests[1])[: len(TOOLS) + 2]
    assert second.usage.cache_read_tokens == sum(s.tokens for s in to_summary)


async def test_a_summary_before_an_assistant_row_stays_a_user_message() -> None:
    assistant = TranscriptMessage(role="assistant", blocks=[TextBlock(text="I was saying")])
    body = lower_request(request(assistant, user("go on"), summary="earlier: hello"))
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert len(breakpoints(body)) == 4
    assert lower_request(request(user("hi"), summary="  "))["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": CACHED}]}
    ], "a blank summary is not sent"


def test_breakpoints_never_land_on_blank_text_and_never_exceed_four() -> None:
    body = lower_request(request(user("question"), user(" ")))
    assert breakpoints(body) == ["notify_operator", "system", "question"]
    bare = lower_request(ProviderRequest(MODEL, "  ", [user("hi")], [], 100, summary="s"))
    assert "system" not in bare and "tools" not in bare
    assert len(breakpoints(bare)) == 2


async def test_a_prompt_over_the_window_is_a_clear_error_not_a_retry(
    anthropic_api: FakeAnthropic, cleanup: list[object]
) -> None:
    provider = provider_for(anthropic_api)
    cleanup.append(provider)
    anthropic_api.context_window = 500
    with pytest.raises(ContextWindowExceededError) as caught:
        await complete(provider, request(user("x" * 4_000)))
    assert not caught.value.retryable and caught.value.status == 400
    assert "prompt is too long" in str(caught.value)
    assert "tokens > 500 maximum" in str(caught.value)
    [(_body, why)] = anthropic_api.refused
    assert why.startswith("prompt is too long") and anthropic_api.requests == []
    # The prompt fits, but not with the room asked for the answer.
    with pytest.raises(ContextWindowExceededError, match="exceed context limit"):
        await complete(provider, ProviderRequest(MODEL, SYSTEM, [user("hi")], TOOLS, 490))


async def test_a_turn_over_the_window_fails_saying_so(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    anthropic_api.context_window = 300
    rt = await open_runtime(db_path, anthropic_api)
    cleanup.append(rt)
    sid = await rt.create_session("assistant")
    await rt.submit(sid, operator("y" * 2_000))
    await rt.wait_idle()
    [run] = await rt.store.runs(session_id=sid)
    assert run.status is RunStatus.FAILED and "prompt is too long" in (run.error or "")
    assert len(anthropic_api.refused) == 1, "not retried"


async def test_count_tokens_agrees_with_the_usage_of_the_same_request(
    anthropic_api: FakeAnthropic, cleanup: list[object]
) -> None:
    provider = provider_for(anthropic_api)
    cleanup.append(provider)
    req = request(user("how many tokens is this?"), summary="we spoke of tokens")
    params = lower_request(req)
    del params["max_tokens"]
    client = anthropic.AsyncAnthropic(api_key="k", base_url=anthropic_api.url)
    cleanup.append(client)
    counted = await client.messages.count_tokens(**params)
    answered = await complete(provider, req)
    assert counted.input_tokens == answered.usage.request_tokens > 0
