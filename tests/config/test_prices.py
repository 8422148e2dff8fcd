"""Prices (issue 38): the maintained table (genai-prices) by the model's exact or dated name,
cache prices included; the config's own over it; an unknown model unpriced, with a warning
in check-config and once in the log, never a neighbour's price."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from adapters.server.check_spend import price_line
from config.loading import load
from config.prices import DEFAULT_PRICES, Price, PriceConfig, PriceTable
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
    "model", ["claude-opus-4-10", "claude-sonnet-4-5-turbo", "claude-test-model", "gpt-4o"]
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
