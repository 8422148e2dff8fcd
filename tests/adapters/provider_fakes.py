"""Each provider kind's loopback fake, served, with the `[provider]` keys that point
`switchboard run` at it and replies written in its own dialect, so one conversation can be
scripted once and run on every provider (Anthropic's API, Claude on Bedrock and on Vertex,
an OpenAI-compatible server, and one that takes only nine-character ids)."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import pytest

from tests.fakes import anthropic_api, openai_api
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.bedrock_api import ACCESS_KEY, SECRET_KEY, FakeBedrock
from tests.fakes.openai_api import FakeOpenAI
from tests.fakes.openai_rules import NINE_ALNUM_IDS
from tests.fakes.vertex_api import ACCESS_TOKEN, PROJECT, REGION, FakeVertex

KINDS = ("anthropic", "bedrock", "vertex", "openai", "openai-nine")
Fake = FakeAnthropic | FakeOpenAI
WORDS = re.compile(r"\S+\s*|\s+")  # how every fake streams text


@dataclass
class Served:
    """A provider's fake, served on loopback, and how the config reaches it."""

    kind: str
    fake: Fake
    config: dict[str, Any]  # keys of `[provider]` or of a `[providers.<name>]` entry

    @property
    def openai(self) -> bool:
        return isinstance(self.fake, FakeOpenAI)

    def text(self, words: str, **kw: Any) -> Any:
        return openai_api.text(words, **kw) if self.openai else anthropic_api.text(words, **kw)

    def call(self, name: str, **kw: Any) -> Any:
        if self.openai:
            return openai_api.tools((name, {}), **kw)
        return anthropic_api.tools((name, {}), **kw)

    def overloaded(self) -> Any:
        """The API's answer when it is overloaded."""
        if self.openai:
            return openai_api.error(503, "server_error", "The engine is currently overloaded")
        if self.kind == "bedrock":
            return anthropic_api.error(503, "ServiceUnavailableException", "Bedrock is unable")
        return anthropic_api.error(529, "overloaded_error", "Overloaded")

    def held(self, first: str, second: str) -> tuple[Any, asyncio.Event]:
        """An answer whose stream stops after `first` until the event is set."""
        hold = asyncio.Event()
        if self.openai:
            at = len(WORDS.findall(first))
            return openai_api.Reply(text=first + second, hold=hold, hold_at=at), hold
        blocks = [{"type": "text", "text": first}, {"type": "text", "text": second}]
        return anthropic_api.Reply(blocks=blocks, hold=hold), hold

    def sent(self, n: int) -> str:
        """The messages of the n-th request, as JSON: what the model was shown."""
        return json.dumps(self.fake.requests[n]["messages"])


async def serve(
    kind: str,
    aiohttp_server: Callable[..., Awaitable[Any]],
    monkeypatch: pytest.MonkeyPatch,
) -> Served:
    """`kind`'s fake served on 127.0.0.1, with the connection's keys that reach it (a key
    left None is not written, so the default's `api_key` goes with Anthropic's only)."""
    fake: Fake
    match kind:
        case "anthropic":
            fake = FakeAnthropic()
        case "bedrock":
            monkeypatch.delenv("AWS_BEARER_TOKEN_BEDROCK", raising=False)  # would replace SigV4
            fake = FakeBedrock(region="eu-west-1")
        case "vertex":
            fake = FakeVertex()
        case "openai":
            fake = FakeOpenAI()
        case _:
            fake = FakeOpenAI(NINE_ALNUM_IDS)
    server = await aiohttp_server(fake.app(), host="127.0.0.1")
    fake.url = str(server.make_url("")).rstrip("/")
    config: dict[str, Any] = {"kind": kind, "base_url": fake.url, "api_key": None}
    match kind:
        case "anthropic":
            config |= {"model": "claude-test-model", "api_key": "test-key"}
        case "bedrock":
            config |= {
                "model": "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
                "region": "eu-west-1",
                "aws_access_key_id": ACCESS_KEY,
                "aws_secret_access_key": SECRET_KEY,
            }
        case "vertex":
            config |= {
                "model": "claude-sonnet-4-5@20250929",
                "base_url": f"{fake.url}/v1",
                "region": REGION,
                "project_id": PROJECT,
                "access_token": ACCESS_TOKEN,
            }
        case _:
            config |= {
                "kind": "openai",
                "model": "mistral-small" if kind == "openai-nine" else "gpt-4.1-mini",
                "base_url": f"{fake.url}/v1",
                "api_key": "test-key",
                "tool_call_ids": "nine" if kind == "openai-nine" else None,
            }
    return Served(kind, fake, config)
