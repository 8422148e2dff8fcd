"""Property: any valid transcript, whatever ids its tool calls carry (Anthropic's, minted,
another server's, too long for OpenAI), lowers to a request the Chat Completions API takes,
on a server of OpenAI's ids and on one of nine letters and digits, with every tool result
answering the call it answered in the transcript."""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from runtime.providers import tool_ids
from runtime.providers.base import ProviderRequest
from runtime.providers.openai_chat import lower_request
from runtime.transcript import (
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    TranscriptMessage,
)
from tests.fakes.openai_rules import NINE_ALNUM_IDS, OPENAI_IDS, check_chat_request

PREFIXES = ["toolu_01A09q90qw90lq917835", "call_", "", "tu", "x" * 70, "id with spaces "]

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
def test_every_valid_transcript_lowers_to_a_request_the_api_takes(
    rounds: list[tuple[str, int, str, list[str]]],
) -> None:
    messages = _transcript(rounds)
    request = ProviderRequest("gpt-4.1-mini", "Be brief.", messages, [], 100)
    for shape, rule in ((tool_ids.OPENAI, OPENAI_IDS), (tool_ids.NINE_ALNUM, NINE_ALNUM_IDS)):
        params = lower_request(request, shape)
        check_chat_request(params, rule)
        sent = params["messages"]
        asked = {
            c["id"]: c["function"]["arguments"]
            for m in sent
            if m["role"] == "assistant"
            for c in m.get("tool_calls") or []
        }
        answered = [m for m in sent if m["role"] == "tool"]
        assert len(answered) == len(asked) == sum(r[1] for r in rounds)
        # each result is still the answer to its own call: the ids moved together
        by_id = {
            b.tool_use_id: b.content
            for m in messages
            for b in m.blocks
            if isinstance(b, ToolResultBlock)
        }
        mapped = tool_ids.lowered(list(by_id), shape)
        assert {m["tool_call_id"]: m["content"] for m in answered} == {
            mapped[i]: content for i, content in by_id.items()
        }
