"""Prices (issues 38, 41): the maintained table (genai-prices) by the model's exact or dated
name on each platform (Anthropic's API, Bedrock, Vertex, OpenAI, OpenRouter), cache prices
included; the config's own over it, for the name as written first; an unknown model unpriced,
with a warning in check-config and once in the log, never a neighbour's price."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from adapters.server.check_spend import price_line
from config.loading import load
from config.prices import DEFAULT_PRICES, MAINTAINED, Price, PriceConfig, PriceTable
from runtime.providers.base import Usage
from runtime.spend import cost_of
from tests.config_file import anthropic, workspace, write_config

TABLE = PriceTable(DEFAULT_PRICES)


@pytest.mark.parametrize(
    ("model", "input", "output", "cache_write", "cache_read"),
    [
        ("claude-opus-4-6", 5.0, 25.0, 6.25, 0.5),  # not Opus 4's $15/$75
        ("claude-opus-4-5-20251101", 5.0, 25.0, 6.25, 0.5),
        ("claude-opus-4-1-20250805", 15.0, 75.0, 18.75, 1.5),
        ("claude-opus-4-20250514", 15.0, 75.0, 18.75, 1.5),
        ("claude-sonnet-4-5-20250929", 3.0, 15.0, 3.75, 0.3),
        ("claude-haiku-4-5", 1.0, 5.0, 1.25, 0.1),
        ("claude-3-5-haiku-latest", 0.8, 4.0, 1.0, 0.08),
    ],
)
def test_a_listed_model_has_the_maintained_table_s_price(
    model: str, input: float, output: float, cache_write: float, cache_read: float
) -> None:
    price = TABLE.of(model)
    assert price == Price(input, output, cache_write, cache_read, "genai-prices")


@pytest.mark.parametrize(
    "model",
    [
        "claude-opus-4-10",
        "claude-sonnet-4-5-turbo",
        "claude-test-model",
        "anthropic.claude-opus-4-10-v1:0",  # on Bedrock
        "claude-opus-4-10@20260101",  # on Vertex
        "gpt-4.1-turbo-preview",
        "anthropic/claude-opus-4.10",  # on OpenRouter
        "llama3.1:8b",  # on Ollama: free, but nobody can say so but the config
        "meta-llama/Llama-3.1-8B-Instruct",  # on vLLM, not OpenRouter's lower-case name
        "mistral-small",
    ],
)
def test_an_unknown_model_has_no_price_not_a_neighbour_s(model: str) -> None:
    assert TABLE.of(model) is None


def test_the_config_s_own_price_wins_and_the_offline_model_is_free() -> None:
    table = PriceTable.with_overrides({"claude-opus-4-6": PriceConfig(input=1.0, output=2.0)})
    assert table.of("claude-opus-4-6") == Price(1.0, 2.0, 1.25, 0.1)
    assert table.of("claude-opus-4-5") == TABLE.of("claude-opus-4-5")
    assert table.of("offline") == Price(0.0, 0.0, 0.0, 0.0, "offline")


def test_a_call_of_opus_4_6_costs_what_anthropic_charges() -> None:
    usage = Usage(input_tokens=1_000_000, output_tokens=1_000_000, cache_read_tokens=1_000_000)
    assert cost_of(TABLE, "claude-opus-4-6", usage) == (5.0 + 25.0 + 0.5, True)


def test_an_unpriced_model_is_warned_of_in_check_config_and_once_in_the_log(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    provider = {**anthropic("http://127.0.0.1:9"), "model": "claude-opus-9-9", "prices": {}}
    path = tmp_path / "switchboard.toml"
    write_config(
        path,
        db=tmp_path / "sb.db",
        workspaces=[workspace("acme", [{"id": "alice", "primary": True}], console="alice")],
        provider=provider,
    )
    config = load(path)
    assert price_line(config).startswith("warning: model 'claude-opus-9-9' has no price")
    with caplog.at_level(logging.WARNING):
        for _ in range(3):
            assert cost_of(TABLE, "claude-opus-9-9", Usage(input_tokens=10)) == (0.0, False)
    told = [r for r in caplog.records if "has no price" in r.getMessage()]
    assert len(told) == 1 and told[0].__dict__["model"] == "claude-opus-9-9"


SONNET_4_5 = Price(3.0, 15.0, 3.75, 0.3, "genai-prices")
SONNET_4_5_REGIONAL = Price(3.3, 16.5, 4.125, 0.33, "genai-prices")  # AWS's 10% more


@pytest.mark.parametrize(
    ("model", "price"),
    [
        # Bedrock: AWS's own price; an in-region endpoint or a geographic profile costs more
        # than a global profile, which costs what Anthropic's API does
        ("anthropic.claude-sonnet-4-5-20250929-v1:0", SONNET_4_5_REGIONAL),
        ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", SONNET_4_5_REGIONAL),
        ("global.anthropic.claude-sonnet-4-5-20250929-v1:0", SONNET_4_5),
        ("eu.anthropic.claude-haiku-4-5-20251001-v1:0", Price(1.1, 5.5, 1.375, 0.11, MAINTAINED)),
        # a model AWS's table does not list at that endpoint: Anthropic's price of it
        (
            "global.anthropic.claude-opus-4-1-20250805-v1:0",
            Price(15.0, 75.0, 18.75, 1.5, MAINTAINED),
        ),
        (
            "arn:aws:bedrock:us-east-1:123456789012:inference-profile/"
            "us.anthropic.claude-opus-4-1-20250805-v1:0",
            Price(15.0, 75.0, 18.75, 1.5, MAINTAINED),
        ),
        # Vertex: Anthropic's price of the model the name says
        ("claude-sonnet-4-5@20250929", SONNET_4_5),
        ("claude-haiku-4-5@20251001", Price(1.0, 5.0, 1.25, 0.1, MAINTAINED)),
        ("claude-3-5-sonnet-v2@20241022", SONNET_4_5),
        # OpenAI: cached input at its own rate; no cache write is charged apart from input
        ("gpt-4.1-mini", Price(0.4, 1.6, 0.4, 0.1, MAINTAINED)),
        ("gpt-4.1-mini-2025-04-14", Price(0.4, 1.6, 0.4, 0.1, MAINTAINED)),
        ("gpt-4.1", Price(2.0, 8.0, 2.0, 0.5, MAINTAINED)),
        ("gpt-4o-2024-05-13", Price(5.0, 15.0, 5.0, 5.0, MAINTAINED)),  # no cached rate
        # OpenRouter: its vendor's price
        ("anthropic/claude-sonnet-4.5", SONNET_4_5),
        ("openai/gpt-4.1", Price(2.0, 8.0, 2.0, 0.5, MAINTAINED)),
    ],
)
def test_each_platform_s_name_of_a_model_has_that_platform_s_price(
    model: str, price: Price
) -> None:
    assert TABLE.of(model) == price


def test_the_config_s_price_wins_for_the_name_as_written_then_for_the_maker_s_name() -> None:
    table = PriceTable.with_overrides(
        {
            "claude-sonnet-4-5-20250929": PriceConfig(input=2.0, output=10.0),
            "eu.anthropic.claude-sonnet-4-5-20250929-v1:0": PriceConfig(input=9.0, output=9.0),
            "gpt-4.1": PriceConfig(input=1.0, output=4.0, cache_read=0.25),
            "llama3.1:8b": PriceConfig(input=0, output=0),
        }
    )
    assert table.of("eu.anthropic.claude-sonnet-4-5-20250929-v1:0") == Price(9.0, 9.0, 11.25, 0.9)
    for same in ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5@20250929"):
        assert table.of(same) == Price(2.0, 10.0, 2.5, 0.2), same
    assert table.of("openai/gpt-4.1") == Price(1.0, 4.0, 1.25, 0.25)
    assert table.of("llama3.1:8b") == Price(0.0, 0.0, 0.0, 0.0)
    assert table.of("anthropic/claude-sonnet-4.5") == SONNET_4_5, (
        "not the dated name the config prices"
    )


def test_a_bedrock_call_with_cached_tokens_costs_each_at_aws_s_rate() -> None:
    usage = Usage(
        input_tokens=1_000_000,
        output_tokens=1_000_000,
        cache_read_tokens=1_000_000,
        cache_write_tokens=1_000_000,
    )
    cost, priced = cost_of(TABLE, "us.anthropic.claude-sonnet-4-5-20250929-v1:0", usage)
    assert priced and cost == pytest.approx(3.3 + 16.5 + 0.33 + 4.125)
