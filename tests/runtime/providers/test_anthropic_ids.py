"""Tool-call ids the transcript owns, sent to Anthropic's API: ids minted elsewhere (OpenAI's
`call_...` of any length, a server's `call.abc:1`) reach it in its own shape, each result
still answering its call; Anthropic's own ids go back as they came."""

from __future__ import annotations

import pytest

from runtime.providers import tool_ids
from runtime.providers.anthropic import AnthropicProvider, lower_request
from runtime.providers.base import ProviderRequest
from runtime.transcript import TextBlock, ToolResultBlock, ToolUseBlock, TranscriptMessage
from tests.fakes.anthropic_api import FakeAnthropic, text, tools
from tests.runtime.helpers import MODEL, provider_for

FOREIGN = ["call.abc:1", "call_" + "Q" * 65, "call_0"]


def turn_with(*tool_ids: str) -> list[TranscriptMessage]:
    """A question, then for each id a call of `sleep` and its result."""
    rows = [TranscriptMessage(role="user", blocks=[TextBlock(text="do three things")])]
    for tool_id in tool_ids:
        call = ToolUseBlock(id=tool_id, name="sleep", input={"seconds": 0})
        rows.append(TranscriptMessage(role="assistant", blocks=[call]))
        result = ToolResultBlock(tool_use_id=tool_id, content=f"slept for {tool_id}")
        rows.append(TranscriptMessage(role="user", blocks=[result]))
    return rows


def ask(rows: list[TranscriptMessage]) -> ProviderRequest:
    return ProviderRequest(MODEL, "You are a test agent.", rows, [], 512)


def sent_ids(body: dict[str, object]) -> list[tuple[str, str]]:
    """Each call's id and the id of the result after it, as sent."""
    messages = body["messages"]
    assert isinstance(messages, list)
    return [
        (messages[i]["content"][0]["id"], messages[i + 1]["content"][0]["tool_use_id"])
        for i in range(1, len(messages) - 1, 2)
    ]


def ignore(*_: object) -> None:
    """Streamed text and retry notices, where a test does not look at them."""


@pytest.fixture
def provider(anthropic_api: FakeAnthropic) -> AnthropicProvider:
    return provider_for(anthropic_api)


async def test_ids_made_by_another_provider_are_sent_legally(
    anthropic_api: FakeAnthropic, provider: AnthropicProvider, cleanup: list[object]
) -> None:
    cleanup.append(provider)
    anthropic_api.script = [text("All three done.")]
    answer = await provider.complete(ask(turn_with(*FOREIGN)), ignore, ignore)
    assert answer.text() == "All three done." and anthropic_api.refused == []
    pairs = sent_ids(anthropic_api.requests[0])
    assert all(call == result for call, result in pairs), "each result answers its call"
    calls = [call for call, _ in pairs]
    assert len(set(calls)) == 3 and all(len(i) <= 64 for i in calls)
    assert calls[2] == "call_0", "an id that fits is sent as it is"


async def test_anthropics_own_ids_go_back_as_they_came(
    anthropic_api: FakeAnthropic, provider: AnthropicProvider, cleanup: list[object]
) -> None:
    cleanup.append(provider)
    anthropic_api.script = [tools(("sleep", {"seconds": 0})), text("Rested.")]
    rows = turn_with()
    first = await provider.complete(ask(rows), ignore, ignore)
    [call] = first.tool_uses()
    assert call.id.startswith("toolu_fake_")
    rows.append(TranscriptMessage(role="assistant", blocks=first.blocks))
    rows.append(
        TranscriptMessage(role="user", blocks=[ToolResultBlock(tool_use_id=call.id, content="ok")])
    )
    await provider.complete(ask(rows), ignore, ignore)
    assert sent_ids(anthropic_api.requests[1]) == [(call.id, call.id)]
    assert anthropic_api.refused == []


def test_the_same_transcript_is_lowered_to_the_same_ids_every_round() -> None:
    """The ids sent are a function of the transcript's: the next round's request has the
    same prefix, so the prompt cache still reads it."""
    first = lower_request(ask(turn_with(*FOREIGN)))
    longer = turn_with(*FOREIGN, "call.def:2")
    second = lower_request(ask(longer))
    assert all(tool_ids.ANTHROPIC.fits(call) for call, _ in sent_ids(second))
    assert sent_ids(first) == sent_ids(second)[:3]
    assert first["messages"][:6] == second["messages"][:6]
