"""Each provider kind besides Anthropic's API (Claude on Bedrock and on Vertex through the
SDK's clients, an OpenAI-compatible server, one taking nine-character ids): its checking
fake, the runtime's provider pointed at it, and a model's round written in its dialect, so a
runtime test can run once per provider."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from runtime.providers import tool_ids
from runtime.providers.anthropic import AnthropicProvider
from runtime.providers.anthropic_clients import bedrock_client, vertex_client
from runtime.providers.base import Provider
from runtime.providers.openai_chat import OpenAIChatProvider
from tests.fakes import anthropic_api, openai_api
from tests.fakes.bedrock_api import ACCESS_KEY, SECRET_KEY, FakeBedrock
from tests.fakes.openai_api import FakeOpenAI
from tests.fakes.openai_rules import NINE_ALNUM_IDS
from tests.fakes.vertex_api import ACCESS_TOKEN, PROJECT, REGION, FakeVertex

KINDS = ("bedrock", "vertex", "openai", "openai-nine")
Fake = FakeBedrock | FakeVertex | FakeOpenAI
INPUTS: dict[str, dict[str, Any]] = {"sleep": {"seconds": 0}}  # a call's input, by tool


@dataclass(frozen=True)
class Round:
    """What the model answers a round: words, and a call of each tool named (`INPUTS`); held
    (after its first block, or its stream's first chunk) until `hold` is set."""

    say: str
    calls: tuple[str, ...] = ()
    hold: Any = field(default=None, compare=False)


def anthropic_reply(r: Round) -> anthropic_api.Reply:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": r.say}] if r.say or not r.calls else []
    blocks += [{"type": "tool_use", "name": n, "input": INPUTS.get(n, {})} for n in r.calls]
    return anthropic_api.Reply(blocks=blocks, hold=r.hold)


def openai_reply(r: Round) -> openai_api.Reply:
    calls: list[tuple[str, dict[str, Any] | str]] = [(n, INPUTS.get(n, {})) for n in r.calls]
    return openai_api.Reply(text=r.say, calls=calls, hold=r.hold)


def fake_of(kind: str, monkeypatch: pytest.MonkeyPatch) -> tuple[Fake, Callable[[Round], Any]]:
    """The kind's fake (to be served, its `url` set), and how a round is written for it."""
    match kind:
        case "bedrock":
            monkeypatch.delenv("AWS_BEARER_TOKEN_BEDROCK", raising=False)  # would replace SigV4
            return FakeBedrock(region="eu-west-1"), anthropic_reply
        case "vertex":
            return FakeVertex(), anthropic_reply
        case "openai":
            return FakeOpenAI(), openai_reply
    return FakeOpenAI(NINE_ALNUM_IDS), openai_reply


def provider_of(kind: str, url: str) -> Provider:
    """The runtime's provider of `kind`, reaching the fake served at `url`."""
    match kind:
        case "bedrock":
            client = bedrock_client(
                "eu-west-1", access_key=ACCESS_KEY, secret_key=SECRET_KEY, base_url=url
            )
            return AnthropicProvider("us.anthropic.claude-sonnet-4-5-20250929-v1:0", client=client)
        case "vertex":
            client = vertex_client(REGION, PROJECT, access_token=ACCESS_TOKEN, base_url=f"{url}/v1")
            return AnthropicProvider("claude-sonnet-4-5@20250929", client=client)
    nine = kind == "openai-nine"
    return OpenAIChatProvider(
        "mistral-small" if nine else "gpt-4.1-mini",
        api_key="test-key",
        base_url=f"{url}/v1",
        id_shape=tool_ids.NINE_ALNUM if nine else tool_ids.OPENAI,
    )
