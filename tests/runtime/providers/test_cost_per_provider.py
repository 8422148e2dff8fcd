"""Usage and cost recorded per provider and model (issue 41, item 5): a real call through each
provider (Anthropic's API, Claude on Bedrock and on Vertex, an OpenAI-compatible server)
against its loopback fake, the cache written and then read, recorded into a real store. Each
row costs its tokens at the rates of that platform's price of the model, each at its own
rate (input, output, cache read, cache write), and says which provider answered."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestServer

from config.prices import DEFAULT_PRICES, MAINTAINED, Price, PriceTable
from runtime.providers.anthropic import AnthropicProvider
from runtime.providers.anthropic_clients import bedrock_client, vertex_client
from runtime.providers.base import Provider, ProviderRequest, Usage
from runtime.providers.openai_chat import OpenAIChatProvider
from runtime.spend import CallPurpose, Charge
from runtime.store.schema import MIGRATIONS
from runtime.store.store import Store
from runtime.store.usage import UsageFilter, record_call
from runtime.transcript import TextBlock, TranscriptMessage
from tests.fakes import openai_api
from tests.fakes.anthropic_api import FakeAnthropic, text
from tests.fakes.bedrock_api import ACCESS_KEY, SECRET_KEY, FakeBedrock
from tests.fakes.openai_api import FakeOpenAI
from tests.fakes.vertex_api import ACCESS_TOKEN, PROJECT, REGION, FakeVertex

Serve = Callable[..., Awaitable[TestServer]]
TABLE = PriceTable(DEFAULT_PRICES)  # the maintained prices, as a config without its own has
SYSTEM = "You are the operations agent. " * 300  # about 2,250 tokens: long enough to cache
CHARGE = Charge("s1", "acme/ops", "alice", "r1")
MILLION = 1_000_000
FIELDS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
ANSWER = "The deploy finished and every check passed; nothing is left to do. " * 3


def ignore(*_: object) -> None:
    """Streamed text and retry notices, which these tests do not look at."""


async def serve(aiohttp_server: Serve, app: Any) -> str:
    server = await aiohttp_server(app, host="127.0.0.1")
    return str(server.make_url("")).rstrip("/")


async def recorded(provider: Provider, name: str, db: Path) -> list[dict[str, Any]]:
    """Three rounds of a conversation, each call's usage recorded as a turn records it, under
    the provider's config name: a short prompt (too short to cache: all input), then a long
    one (the cache written), then the same with one more message (the cache read, the rest
    written or not cached)."""
    store = await Store.open(db)
    try:
        said: list[TranscriptMessage] = []
        for n, system in enumerate(("Be brief.", SYSTEM, SYSTEM)):
            said.append(TranscriptMessage(role="user", blocks=[TextBlock(text=f"hello {n}")]))
            request = ProviderRequest(provider.model, system, said, [], 1024)
            answer = await provider.complete(request, ignore, ignore)
            said.append(TranscriptMessage(role="assistant", blocks=answer.blocks))
            async with store.write() as w:
                record_call(w, TABLE, CHARGE, answer.model, CallPurpose.ROUND, answer.usage, name)
        rows = await store.read_sql("SELECT * FROM model_usage ORDER BY at")
        return [dict(r) for r in rows]
    finally:
        await provider.close()
        await store.close()


def assert_costs(rows: list[dict[str, Any]], model: str, name: str, price: Price) -> None:
    """Each row is `model` on `name`, and costs each kind of token at `price`'s rate."""
    assert TABLE.of(model) == price, "the platform's price of the model"
    for row in rows:
        assert (row["model"], row["provider"], row["priced"]) == (model, name, 1)
        expected = (
            row["input_tokens"] * price.input
            + row["output_tokens"] * price.output
            + row["cache_read_tokens"] * price.cache_read
            + row["cache_write_tokens"] * price.cache_write
        ) / MILLION
        assert row["cost_usd"] == pytest.approx(expected, rel=1e-12), row


def tokens(row: dict[str, Any]) -> tuple[int, ...]:
    return tuple(row[f] for f in FIELDS)


def assert_claude_s_cache(rows: list[dict[str, Any]], usages: list[dict[str, Any]]) -> None:
    """Each row is the usage the fake reported; Claude's cache was written, then read. (The
    fakes cache any length up to the last message, so none of it is uncached input here: the
    input rate is shown on OpenAI's server, and on Bedrock's name with every kind of token.)"""
    reported = [
        (
            u["input_tokens"],
            u["output_tokens"],
            u["cache_read_input_tokens"],
            u["cache_creation_input_tokens"],
        )
        for u in usages
    ]
    assert [tokens(r) for r in rows] == reported
    short, written, read = rows
    assert short["output_tokens"] > 10
    assert written["cache_write_tokens"] > 1000 and read["cache_read_tokens"] > 1000
    assert read["cache_write_tokens"] > 0, "the new messages, written for the next round"


async def test_anthropic_s_api_is_charged_anthropic_s_cache_rates(
    anthropic_api: FakeAnthropic, db_path: Path
) -> None:
    model = "claude-sonnet-4-5"
    anthropic_api.script = [text(ANSWER)] * 3
    provider = AnthropicProvider(
        model, api_key="test-key", base_url=anthropic_api.url, max_attempts=1
    )
    rows = await recorded(provider, "default", db_path)
    assert_claude_s_cache(rows, anthropic_api.usages)
    assert_costs(rows, model, "default", Price(3.0, 15.0, 3.75, 0.3, MAINTAINED))
    _, written, read = rows
    assert written["cost_usd"] > 2 * read["cost_usd"], "a cache read costs a tenth of a write"


async def test_bedrock_is_charged_aws_s_price_of_its_regional_profile(
    aiohttp_server: Serve, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AWS_BEARER_TOKEN_BEDROCK", raising=False)  # would replace SigV4
    model = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
    fake = FakeBedrock(region="eu-west-1")
    fake.script = [text(ANSWER)] * 3
    fake.url = await serve(aiohttp_server, fake.app())
    client = bedrock_client(
        "eu-west-1", access_key=ACCESS_KEY, secret_key=SECRET_KEY, base_url=fake.url
    )
    rows = await recorded(
        AnthropicProvider(model, client=client, max_attempts=1), "bedrock", db_path
    )
    assert fake.refused == []
    assert_claude_s_cache(rows, fake.usages)
    # AWS charges 10% more in a region (or a geographic profile) than a global profile
    assert_costs(rows, model, "bedrock", Price(3.3, 16.5, 4.125, 0.33, MAINTAINED))


async def test_vertex_is_charged_anthropic_s_price_of_the_model_its_name_says(
    aiohttp_server: Serve, db_path: Path
) -> None:
    model = "claude-haiku-4-5@20251001"
    fake = FakeVertex()
    fake.script = [text(ANSWER)] * 3
    fake.url = await serve(aiohttp_server, fake.app())
    client = vertex_client(REGION, PROJECT, access_token=ACCESS_TOKEN, base_url=f"{fake.url}/v1")
    rows = await recorded(
        AnthropicProvider(model, client=client, max_attempts=1), "vertex", db_path
    )
    assert fake.refused == []
    assert_claude_s_cache(rows, fake.usages)
    assert_costs(rows, model, "vertex", Price(1.0, 5.0, 1.25, 0.1, MAINTAINED))


async def test_an_openai_server_s_cached_input_is_charged_at_its_cached_rate(
    aiohttp_server: Serve, db_path: Path
) -> None:
    model = "gpt-4.1-mini"
    fake = FakeOpenAI()
    fake.script = [openai_api.text(ANSWER)] * 3
    fake.url = await serve(aiohttp_server, fake.app()) + "/v1"
    provider = OpenAIChatProvider(model, api_key="test-key", base_url=fake.url, max_attempts=1)
    rows = await recorded(provider, "backup", db_path)
    reported = [
        (
            u["prompt_tokens"] - u["prompt_tokens_details"]["cached_tokens"],
            u["completion_tokens"],
            u["prompt_tokens_details"]["cached_tokens"],
            0,  # OpenAI writes its cache unasked and charges it as input
        )
        for u in fake.usages
    ]
    assert [tokens(r) for r in rows] == reported
    _, long, again = rows
    assert long["cache_read_tokens"] == 0 and again["cache_read_tokens"] >= 1024
    assert again["input_tokens"] > 0 and again["output_tokens"] > 10
    assert_costs(rows, model, "backup", Price(0.4, 1.6, 0.4, 0.1, MAINTAINED))
    assert again["cost_usd"] < long["cost_usd"] / 2, "cached input costs a quarter"


async def test_a_local_model_has_no_price_said_once_and_costs_nothing(
    aiohttp_server: Serve,
    db_path: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("runtime.spend._UNPRICED_TOLD", set())  # as a process just started
    model = "llama3.1:8b"  # as Ollama names it: free to run, but no table can say so
    fake = FakeOpenAI()
    fake.models.add(model)
    fake.url = await serve(aiohttp_server, fake.app()) + "/v1"
    provider = OpenAIChatProvider(model, api_key="ollama", base_url=fake.url, max_attempts=1)
    with caplog.at_level(logging.WARNING):
        rows = await recorded(provider, "local", db_path)
    assert [(r["cost_usd"], r["priced"], r["provider"]) for r in rows] == [(0.0, 0, "local")] * 3
    assert sum(r["input_tokens"] + r["cache_read_tokens"] for r in rows) > 0, "tokens counted"
    told = [r for r in caplog.records if "has no price" in r.getMessage()]
    assert len(told) == 1 and told[0].__dict__["model"] == model


async def test_usage_sums_by_provider_and_calls_from_before_have_none(db_path: Path) -> None:
    """A database from before providers were recorded (runtime migration 12) keeps its calls,
    summed under no provider, beside the calls recorded since under theirs, each token at its
    platform's rate."""
    store = await Store.open(db_path, extra_migrations={"runtime": MIGRATIONS[:12]})
    try:  # one statement of its own: a store of that version has no blocks of numbers
        await store.db.alone(
            "INSERT INTO model_usage (at, session_id, agent_id, model, purpose,"
            " input_tokens, output_tokens, cache_read_tokens, cache_write_tokens,"
            " cost_usd, priced) VALUES (1, 's0', 'acme/ops', 'claude-sonnet-4-5', 'round',"
            " 1000, 100, 0, 0, 0.0045, 1)",
            (),
        )
    finally:
        await store.close()
    store = await Store.open(db_path)
    try:
        async with store.write() as w:
            for model, name, usage in [
                ("claude-sonnet-4-5", "default", Usage(1000, 100, 2000, 500)),
                (
                    "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
                    "bedrock",
                    Usage(1000, 100, 2000, 500),
                ),
                ("gpt-4.1-mini", "backup", Usage(1000, 100, 2000, 0)),
                ("gpt-4.1-mini", "backup", Usage(1000, 100, 2000, 0)),
            ]:
                record_call(w, TABLE, CHARGE, model, CallPurpose.ROUND, usage, name)
        grouped = await store.usage.grouped(UsageFilter(since=0), "provider")
    finally:
        await store.close()
    assert [(name, s.calls, pytest.approx(s.cost_usd * MILLION)) for name, s in grouped] == [
        ("bedrock", 1, 1000 * 3.3 + 100 * 16.5 + 2000 * 0.33 + 500 * 4.125),
        ("default", 1, 1000 * 3.0 + 100 * 15.0 + 2000 * 0.3 + 500 * 3.75),
        (None, 1, 4500.0),
        ("backup", 2, 2 * (1000 * 0.4 + 100 * 1.6 + 2000 * 0.1)),
    ]


async def test_sessions_on_a_model_without_a_price_rank_by_their_tokens(db_path: Path) -> None:
    """Every call costs 0: the ranking (the top sessions of `switchboard usage` and the
    console's Usage tab) is by tokens, not by the sessions' ids."""
    store = await Store.open(db_path)
    try:
        async with store.write() as w:
            for session, tokens in [("s-a", 10), ("s-b", 3000), ("s-c", 200)]:
                charge = Charge(session, "acme/ops", "alice", f"r-{session}")
                usage = Usage(tokens, 1, 0, 0)
                record_call(w, TABLE, charge, "offline", CallPurpose.ROUND, usage, "offline")
        top = await store.usage.grouped(UsageFilter(since=0), "session_id", limit=2)
    finally:
        await store.close()
    assert [(key, s.cost_usd) for key, s in top] == [("s-b", 0.0), ("s-c", 0.0)]
