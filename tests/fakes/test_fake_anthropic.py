"""The fake must refuse what the real API refuses, or the other tests prove nothing."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest
from anthropic.types import Usage

from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.anthropic_tokens import count_tokens

HI = {"role": "user", "content": [{"type": "text", "text": "hi"}]}
USE = {
    "role": "assistant",
    "content": [{"type": "tool_use", "id": "toolu_1", "name": "sleep", "input": {}}],
}


def result(tool_id: str = "toolu_1") -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_id, "content": "ok"}


BROKEN = {
    "empty text": (
        [{"role": "user", "content": [{"type": "text", "text": ""}]}],
        "must be non-empty",
    ),
    "whitespace text": (
        [{"role": "user", "content": [{"type": "text", "text": "  "}]}],
        "non-whitespace",
    ),
    "empty message": ([HI, {"role": "assistant", "content": []}, HI], "non-empty content"),
    "unpaired tool_use": ([HI, USE, HI], "without `tool_result`"),
    "orphan tool_result": (
        [{"role": "user", "content": [result("toolu_9")]}],
        "unexpected `tool_use_id`",
    ),
    "duplicate ids": (
        [
            HI,
            USE,
            {"role": "user", "content": [result()]},
            USE,
            {"role": "user", "content": [result()]},
        ],
        "must be unique",
    ),
    "result after text": (
        [HI, USE, {"role": "user", "content": [{"type": "text", "text": "x"}, result()]}],
        "without `tool_result`",
    ),
    "no alternation": ([HI, HI], "alternate"),
    "a tool_use inside a tool_result": (
        [HI, USE, {"role": "user", "content": [{**result(), "content": USE["content"]}]}],
        "holds text, image and document blocks",
    ),
    "empty text inside a tool_result": (
        [
            HI,
            USE,
            {"role": "user", "content": [{**result(), "content": [{"type": "text", "text": ""}]}]},
        ],
        "must be non-empty",
    ),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
async def test_broken_requests_get_the_api_400(anthropic_api: FakeAnthropic, case: str) -> None:
    messages, wording = BROKEN[case]
    client = anthropic.AsyncAnthropic(api_key="k", base_url=anthropic_api.url, max_retries=0)
    with pytest.raises(anthropic.BadRequestError) as caught:
        await client.messages.create(model="m", max_tokens=10, messages=messages)  # type: ignore[arg-type]
    assert wording in str(caught.value)
    assert caught.value.body["error"]["type"] == "invalid_request_error"  # type: ignore[index]
    assert anthropic_api.requests == [] and len(anthropic_api.refused) == 1
    await client.close()


async def test_a_valid_tool_round_trip_is_accepted(anthropic_api: FakeAnthropic) -> None:
    client = anthropic.AsyncAnthropic(api_key="k", base_url=anthropic_api.url, max_retries=0)
    reply = await client.messages.create(
        model="m",
        max_tokens=10,
        messages=[
            HI,
            USE,
            {"role": "user", "content": [result(), {"type": "text", "text": "and"}]},
        ],
    )  # type: ignore[list-item]
    assert reply.content[0].type == "text"
    await client.close()


def _client(fake: FakeAnthropic) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(api_key="k", base_url=fake.url, max_retries=0)


CACHED = {"type": "ephemeral"}


def _said(text: str, *, cache: bool = False) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": text}
    return {**block, "cache_control": CACHED} if cache else block


MISPLACED = {
    "five breakpoints": (
        [{"role": "user", "content": [_said(f"part {i}", cache=True) for i in range(5)]}],
        "A maximum of 4 blocks with cache_control may be provided. Found 5.",
    ),
    "on an empty text block": (
        [{"role": "user", "content": [_said("hi"), _said("", cache=True)]}],
        "messages.0.content.1.text: cache_control cannot be set for empty text blocks",
    ),
    "on a message": (
        [{"role": "user", "content": "hi", "cache_control": CACHED}],
        "messages.0.cache_control: Extra inputs are not permitted",
    ),
    "of an unknown type": (
        [{"role": "user", "content": [{**_said("hi"), "cache_control": {"type": "forever"}}]}],
        "cache_control.type: Input should be 'ephemeral'",
    ),
}


@pytest.mark.parametrize("case", sorted(MISPLACED))
async def test_cache_control_is_refused_where_the_api_refuses_it(
    anthropic_api: FakeAnthropic, case: str
) -> None:
    messages, wording = MISPLACED[case]
    client = _client(anthropic_api)
    with pytest.raises(anthropic.BadRequestError) as caught:
        await client.messages.create(model="m", max_tokens=10, messages=messages)  # type: ignore[arg-type]
    assert wording in str(caught.value)
    with pytest.raises(anthropic.BadRequestError):  # count_tokens checks the same rules
        await client.messages.count_tokens(model="m", messages=messages)  # type: ignore[arg-type]
    assert anthropic_api.requests == []
    await client.close()


async def test_four_breakpoints_over_tools_system_and_messages_are_accepted(
    anthropic_api: FakeAnthropic,
) -> None:
    client = _client(anthropic_api)
    schema = {"type": "object", "properties": {}}
    await client.messages.create(
        model="m",
        max_tokens=10,
        tools=[{"name": "a", "input_schema": schema, "cache_control": CACHED}],  # type: ignore[typeddict-item]
        system=[_said("be brief", cache=True)],  # type: ignore[list-item]
        messages=[{"role": "user", "content": [_said("x", cache=True), _said("y", cache=True)]}],  # type: ignore[list-item]
    )
    assert anthropic_api.refused == []
    await client.close()


def test_the_token_rule() -> None:
    body = {
        "model": "m",
        "tools": [{"name": "sleep", "description": "naps", "input_schema": {"type": "object"}}],
        "system": [_said("12345678", cache=True)],
        "messages": [
            {"role": "user", "content": "hello"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t", "name": "sleep", "input": {"s": 1}}],
            },
            {"role": "user", "content": [result("t")]},
        ],
    }
    # ceil(chars / 4) per block: tool 5+4+17 -> 7; system 8 -> 2; "hello" -> 2;
    # tool_use 5+7 -> 3; tool_result 2 -> 1
    assert count_tokens(body) == 7 + 2 + 2 + 3 + 1


async def test_a_prompt_over_the_window_gets_the_api_400(anthropic_api: FakeAnthropic) -> None:
    anthropic_api.context_window = 100
    client = _client(anthropic_api)
    long = [{"role": "user", "content": "x" * 404}]  # 101 tokens
    with pytest.raises(anthropic.BadRequestError) as caught:
        await client.messages.create(model="m", max_tokens=1, messages=long)  # type: ignore[arg-type]
    assert caught.value.body == {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "prompt is too long: 101 tokens > 100 maximum",
        },
    }
    fits = [{"role": "user", "content": "x" * 360}]  # 90 tokens: fits, but not with 20 more
    with pytest.raises(anthropic.BadRequestError) as caught:
        await client.messages.create(model="m", max_tokens=20, messages=fits)  # type: ignore[arg-type]
    assert "input length and `max_tokens` exceed context limit: 90 + 20 > 100" in str(caught.value)
    await client.messages.create(model="m", max_tokens=10, messages=fits)  # type: ignore[arg-type]
    counted = await client.messages.count_tokens(model="m", messages=long)  # type: ignore[arg-type]
    assert counted.input_tokens == 101, "count_tokens counts what does not fit, too"
    assert len(anthropic_api.refused) == 2 and len(anthropic_api.requests) == 1
    await client.close()


def _conversation(rounds: int) -> list[dict[str, Any]]:
    """A user prompt, then `rounds` tool rounds, the last block a cache breakpoint."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": [_said("start the job")]}]
    for n in range(rounds):
        use = {"type": "tool_use", "id": f"t{n}", "name": "sleep", "input": {"n": n}}
        result = {"type": "tool_result", "tool_use_id": f"t{n}", "content": f"slept {n}"}
        messages += [{"role": "assistant", "content": [use]}, {"role": "user", "content": [result]}]
    messages[-1]["content"][-1] = {**messages[-1]["content"][-1], "cache_control": CACHED}
    return messages


@pytest.mark.parametrize("stream", [False, True])
async def test_usage_reports_the_cache(anthropic_api: FakeAnthropic, stream: bool) -> None:
    client = _client(anthropic_api)

    async def usage(messages: list[dict[str, Any]], model: str = "m") -> Usage:
        params: dict[str, Any] = {"model": model, "max_tokens": 10, "messages": messages}
        if not stream:
            return (await client.messages.create(**params)).usage
        async with client.messages.stream(**params) as events:
            return (await events.get_final_message()).usage

    first = await usage(_conversation(1))
    assert (first.cache_read_input_tokens, first.input_tokens) == (0, 0)
    assert first.cache_creation_input_tokens == count_tokens({"messages": _conversation(1)})
    second = await usage(_conversation(2))  # two blocks on: found by the lookback
    assert second.cache_read_input_tokens == first.cache_creation_input_tokens
    assert second.cache_creation_input_tokens == count_tokens(
        {"messages": _conversation(2)}
    ) - count_tokens({"messages": _conversation(1)})
    assert (await usage(_conversation(2), model="other")).cache_read_input_tokens == 0
    far = await usage(_conversation(14))  # 24 blocks after the last cached prefix
    assert far.cache_read_input_tokens == 0
    changed = _conversation(2)
    changed[0]["content"] = [_said("start another job")]
    assert (await usage(changed)).cache_read_input_tokens == 0
    uncached = await usage([{"role": "user", "content": "no breakpoint"}])
    assert uncached.input_tokens == 4 and uncached.cache_creation_input_tokens == 0
    assert [u["output_tokens"] for u in anthropic_api.usages] == [1] * 6  # "ok"
    await client.close()
