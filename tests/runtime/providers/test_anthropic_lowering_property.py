"""Property: any valid transcript, whatever ids its tool calls carry (Anthropic's, OpenAI's,
minted, nine letters and digits, another server's with dots and spaces, too long for
OpenAI), lowers to a request the Messages API takes (Anthropic's API, and Claude on Bedrock
and Vertex, which check the same rules), with every tool result answering the call it
answered in the transcript. The mirror of test_openai_lowering_property.py."""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from runtime.providers import tool_ids
from runtime.providers.anthropic_lowering import lower_request
from runtime.providers.base import ProviderRequest
from runtime.tools.base import ToolSpec
from runtime.transcript import TextBlock, ToolResultBlock, ToolUseBlock, TranscriptMessage
from tests.fakes.anthropic_rules import check_request

PREFIXES = ["toolu_01A09q90qw90lq917835", "call_", "", "a1B2c3D4", "call.abc:", "id with spaces "]
SLEEP = ToolSpec(
    "sleep", "waits", {"type": "object", "properties": {"seconds": {"type": "number"}}}
)

# a round: the model's words (maybe none), how many tools it called, the operator's words after
round_st = st.tuples(
    st.sampled_from(["", "Checking.", "  "]),
    st.integers(0, 3),
    st.sampled_from(["", "and then?", " "]),
    st.lists(st.sampled_from(PREFIXES), min_size=3, max_size=3),
)


def _transcript(rounds: list[tuple[str, int, str, list[str]]]) -> list[TranscriptMessage]:
    counter = itertools.count()
    messages = [TranscriptMessage(role="user", blocks=[TextBlock(text="start")])]
    for said, calls, after, prefixes in rounds:
        ids = [f"{prefixes[i]}{next(counter)}" for i in range(calls)]
        uses = [ToolUseBlock(id=i, name="sleep", input={"seconds": 1}) for i in ids]
        blocks: list[Any] = [TextBlock(text=said), *uses] if said.strip() or not uses else uses
        if not said.strip() and not uses:
            blocks = [TextBlock(text="ok")]
        messages.append(TranscriptMessage(role="assistant", blocks=blocks))
        results = [ToolResultBlock(tool_use_id=i, content=f"result of {i}") for i in ids]
        words = [TextBlock(text=after)] if after.strip() or not results else []
        messages.append(
            TranscriptMessage(role="user", blocks=[*results, *words] or [TextBlock(text="go on")])
        )
    return messages


@settings(max_examples=200, deadline=None)
@given(rounds=st.lists(round_st, min_size=1, max_size=6))
def test_every_valid_transcript_lowers_to_a_request_the_messages_api_takes(
    rounds: list[tuple[str, int, str, list[str]]],
) -> None:
    messages = _transcript(rounds)
    params = lower_request(
        ProviderRequest("claude-test-model", "Be brief.", messages, [SLEEP], 100)
    )
    check_request(params)
    sent = params["messages"]
    asked = [
        b["id"]
        for m in sent
        if m["role"] == "assistant"
        for b in m["content"]
        if b["type"] == "tool_use"
    ]
    answered = {
        b["tool_use_id"]: b["content"]
        for m in sent
        if m["role"] == "user"
        for b in m["content"]
        if b["type"] == "tool_result"
    }
    assert len(asked) == len(set(asked)) == len(answered) == sum(r[1] for r in rounds)
    # each result is still the answer to its own call: the ids moved together
    by_id = {
        b.tool_use_id: b.content
        for m in messages
        for b in m.blocks
        if isinstance(b, ToolResultBlock)
    }
    mapped = tool_ids.lowered(list(by_id), tool_ids.ANTHROPIC)
    assert {k: _text(v) for k, v in answered.items()} == {
        mapped[i]: content for i, content in by_id.items()
    }
    assert all(mapped[i] == i for i in by_id if i.startswith("toolu_")), "its own ids kept"


def _text(content: Any) -> Any:
    """A tool result's content as sent: a string, or text blocks."""
    if isinstance(content, list):
        return "".join(b["text"] for b in content if b["type"] == "text")
    return content
