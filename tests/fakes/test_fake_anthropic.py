"""The fake must refuse what the real API refuses, or the other tests prove nothing."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest

from tests.fakes.anthropic_api import FakeAnthropic

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
