"""Property: a session's requests lowered round after round with its kept `History` (only what
is new lowered) are byte for byte the requests lowered whole, Anthropic's and OpenAI's (ids of
OpenAI's shape and of nine letters and digits), whatever happens between rounds: rows added
one at a time (blank ones, files, operator words merged into a tool result's row), a row
replaced by another object (the turn's first row with memories offered), the oldest rows
compacted into a summary, a file whose bytes were missing, a tool-call id that is not sent as
it is. And a round's characters counted with the history are the same count."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runtime.errors import TranscriptInvariantError
from runtime.providers import openai_chat, tool_ids
from runtime.providers.anthropic_lowering import _Lowering, lower_request
from runtime.providers.base import ProviderRequest, request_chars
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

SLEEP = ToolSpec(
    "sleep", "waits", {"type": "object", "properties": {"seconds": {"type": "number"}}}
)
IDS = ["toolu_01A", "call_", "tu", "call.abc:"]  # the last is not sent as it is
FILE = AttachmentBlock(
    id="att1", name="a.png", media_type="image/png", form=AttachmentForm.IMAGE, size=3
)

# a round: what the model said, how many tools it called, the operator's words, and what
# happens before the next request
step_st = st.tuples(
    st.sampled_from(["", "Checking.", "  "]),
    st.integers(0, 2),
    st.sampled_from(["", "and then?", " ", "file"]),
    st.sampled_from(["append", "append", "append", "replace", "compact", "summary"]),
    st.sampled_from(IDS[:3] * 5 + IDS[3:]),
)


def _encoded(params: dict[str, Any]) -> str:
    """As the SDK sends the body: its encoder's settings, keys in order."""
    return json.dumps(params, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _whole(request: ProviderRequest, shape: tool_ids.IdShape | None = None) -> str | list[str]:
    return _kept(ProviderRequest(**{**_fields(request), "history": None}), shape)


def _kept(request: ProviderRequest, shape: tool_ids.IdShape | None = None) -> str | list[str]:
    """Anthropic's request, or (`shape`) OpenAI's for a server taking ids of that shape."""
    try:
        if shape is None:
            return _encoded(lower_request(request))
        return _encoded(openai_chat.lower_request(request, shape))
    except TranscriptInvariantError as exc:
        return exc.problems


def _fields(request: ProviderRequest) -> dict[str, Any]:
    return {f: getattr(request, f) for f in request.__slots__}


@settings(max_examples=300, deadline=None)
@given(steps=st.lists(step_st, min_size=1, max_size=8), files=st.booleans())
def test_requests_lowered_with_the_history_are_the_requests_lowered_whole(
    steps: list[tuple[str, int, str, str, str]], files: bool
) -> None:
    counter = itertools.count()
    history = History()
    rows = [TranscriptMessage(role="user", blocks=[TextBlock(text="start")])]
    summary: str | None = None
    stored = {"att1": b"png"} if files else {}
    for said, calls, after, then, prefix in steps:
        ids = [f"{prefix}{next(counter)}" for _ in range(calls)]
        uses: list[Block] = [ToolUseBlock(id=i, name="sleep", input={"s": 1}) for i in ids]
        rows.append(TranscriptMessage(role="assistant", blocks=[TextBlock(text=said), *uses]))
        results: list[Block] = [ToolResultBlock(tool_use_id=i, content=f"r {i}") for i in ids]
        rows.append(TranscriptMessage(role="user", blocks=results or [TextBlock(text="go")]))
        words: list[Block] = [FILE] if after == "file" else [TextBlock(text=after)]
        rows.append(TranscriptMessage(role="user", blocks=words))  # merged into the last
        match then:
            case "replace":  # the same words in another object, memories put first
                rows[-1] = rows[-1].model_copy(
                    update={"blocks": [TextBlock(text="memories"), *rows[-1].blocks]}
                )
            case "compact" if len(rows) > 4:
                del rows[: len(rows) // 2]
                while rows and rows[0].role != "user":
                    del rows[0]
                summary = f"summary {next(counter)}"
            case "summary":
                summary = summary or "what happened before"
        for end in range(max(1, len(rows) - 2), len(rows) + 1):  # the round's rows so far
            request = ProviderRequest(
                "claude-test-model",
                "Be brief.",
                list(rows[:end]),
                [SLEEP],
                100,
                summary=summary,
                files=dict(stored),
                history=history,
            )
            assert _kept(request) == _whole(request)
            for shape in (tool_ids.OPENAI, tool_ids.NINE_ALNUM):
                assert _kept(request, shape) == _whole(request, shape)
            assert request_chars(request) == request_chars(
                ProviderRequest(**{**_fields(request), "history": None})
            )


def test_a_round_lowers_only_its_new_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """What a user would notice: the CPU of a round does not grow with the session."""
    history = History()
    rows = [TranscriptMessage(role="user", blocks=[TextBlock(text="start")])]
    for n in range(200):
        rows.append(TranscriptMessage(role="assistant", blocks=[TextBlock(text=f"a{n}")]))
        rows.append(TranscriptMessage(role="user", blocks=[TextBlock(text=f"u{n}")]))
    lower_request(
        ProviderRequest("claude-test-model", "", list(rows), [SLEEP], 100, history=history)
    )
    rows.append(TranscriptMessage(role="assistant", blocks=[TextBlock(text="new")]))
    rows.append(TranscriptMessage(role="user", blocks=[TextBlock(text="newer")]))
    lowered: list[Block] = []
    block = _Lowering.block

    def counting(self: _Lowering, b: Block) -> dict[str, Any]:
        lowered.append(b)
        return block(self, b)

    monkeypatch.setattr(_Lowering, "block", counting)
    params = lower_request(
        ProviderRequest("claude-test-model", "", list(rows), [SLEEP], 100, history=history)
    )
    assert len(params["messages"]) == 403
    assert len(lowered) <= 3, f"{len(lowered)} blocks lowered for two new rows"
