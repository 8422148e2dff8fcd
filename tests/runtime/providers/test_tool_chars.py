"""A round's estimate counts its tools' characters without encoding their schemas again (issue
45: CPU per turn): each tool counts its own once, and the count stays the one a round made."""

from __future__ import annotations

import json
from typing import Any

import pytest

from runtime.providers import base
from runtime.providers.base import ProviderRequest
from runtime.tools.base import ToolSpec
from runtime.tools.memory import Remember
from runtime.transcript import TextBlock, TranscriptMessage

SLEEP = ToolSpec(
    "sleep", "waits", {"type": "object", "properties": {"seconds": {"type": "number"}}}
)


def test_a_round_counts_its_tools_without_encoding_them(monkeypatch: pytest.MonkeyPatch) -> None:
    tools = [SLEEP, Remember.spec]
    request = ProviderRequest(
        model="m",
        system="be brief",
        messages=[TranscriptMessage(role="user", blocks=[TextBlock(text="hello")])],
        tools=tools,
        max_tokens=100,
    )
    schemas = sum(len(t.name) + len(t.description) + len(json.dumps(t.input_schema)) for t in tools)
    assert base.request_chars(request) == len("be brief") + schemas + len("hello")
    encoded: list[Any] = []
    monkeypatch.setattr(base.json, "dumps", lambda value, **kw: encoded.append(value) or "")
    assert base.request_chars(request) == len("be brief") + schemas + len("hello")
    assert encoded == [], "the next round encodes no schema"
