"""What a model's tokens cost, in US dollars per million tokens.

A model's price is, in this order: the config's own (`[provider.prices."model-name"]`), the
offline model's (free), or the maintained table of the `genai-prices` package (offline data
shipped in the package, with cache-read and cache-write prices) for that model exactly or a
dated name of it (`claude-sonnet-4-5-20250929`). Any other model has no price, and its calls
count as $0 with a warning (check-config, and the log once): never a neighbour's price, which
the old prefix table charged (`claude-opus-4-6` as Opus 4, a newer name as nothing known)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from functools import cache
from typing import Any

from genai_prices import data_snapshot
from pydantic import Field

from config.strict import Strict

MILLION = 1_000_000
PROVIDER = "anthropic"  # whose prices the maintained table is asked for
MAINTAINED = "genai-prices"


class PriceConfig(Strict):
    """`[provider.prices."claude-sonnet-4-5"]`: dollars per million tokens."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cache_write: float | None = Field(None, ge=0)  # else 1.25 x input (a 5-minute write)
    cache_read: float | None = Field(None, ge=0)  # else 0.1 x input


@dataclass(frozen=True, slots=True)
class Price:
    input: float
    output: float
    cache_write: float
    cache_read: float
    source: str = "config"  # where it comes from: "config", "genai-prices", "offline"

    @classmethod
    def of(cls, input: float, output: float) -> Price:
        """Anthropic's rule: a 5-minute cache write costs 1.25 x input, a cache read 0.1 x."""
        return cls(input, output, round(input * 1.25, 6), round(input * 0.1, 6))

    def cost(self, input: int, output: int, cache_read: int = 0, cache_write: int = 0) -> float:
        """Dollars for these token counts."""
        return (
            input * self.input
            + output * self.output
            + cache_read * self.cache_read
            + cache_write * self.cache_write
        ) / MILLION


# The models priced here whatever the table says: the offline model is free.
DEFAULT_PRICES: dict[str, Price] = {"offline": Price(0.0, 0.0, 0.0, 0.0, "offline")}


def _per_million(value: Any) -> float | None:
    """A price of the table: a number, or tiers (the base tier: what a request under the
    long-context threshold pays)."""
    if value is None:
        return None
    base = value if isinstance(value, Decimal) else getattr(value, "base", None)
    return None if base is None else float(base)


def _names_it(model_id: str, model: str) -> bool:
    """`model` is the table's model itself, or a dated or `-latest` name of it, never a
    neighbour that only starts the same (`claude-opus-4-10` is not `claude-opus-4-1`)."""
    base = model_id.removesuffix("-latest").removesuffix("-0")
    return re.fullmatch(re.escape(base) + r"(-0|-latest|-\d{8})?", model) is not None


@cache
def maintained_price(model: str) -> Price | None:
    """The maintained table's price of `model` now, or None when it does not list it."""
    try:
        _, info = data_snapshot.get_snapshot().find_provider_model(model, None, PROVIDER, None)
    except LookupError:
        return None
    if not _names_it(info.id, model):
        return None
    prices = info.get_prices(datetime.now(tz=UTC))
    input = _per_million(getattr(prices, "input_mtok", None))
    output = _per_million(getattr(prices, "output_mtok", None))
    if input is None or output is None:
        return None
    base = Price.of(input, output)
    write = _per_million(getattr(prices, "cache_write_mtok", None))
    read = _per_million(getattr(prices, "cache_read_mtok", None))
    return Price(
        input,
        output,
        base.cache_write if write is None else write,
        base.cache_read if read is None else read,
        MAINTAINED,
    )


@dataclass(frozen=True, slots=True)
class PriceTable:
    prices: Mapping[str, Price]  # the config's own and the offline model's, by exact name
    maintained: bool = field(default=True)  # False: no default prices (tests of the config's)

    @classmethod
    def with_overrides(cls, overrides: Mapping[str, PriceConfig]) -> PriceTable:
        table = dict(DEFAULT_PRICES)
        for model, p in overrides.items():
            base = Price.of(p.input, p.output)
            table[model] = Price(
                p.input,
                p.output,
                base.cache_write if p.cache_write is None else p.cache_write,
                base.cache_read if p.cache_read is None else p.cache_read,
            )
        return cls(table)

    def of(self, model: str) -> Price | None:
        """The price of `model`: the config's, else the maintained table's; None: unpriced."""
        own = self.prices.get(model)
        if own is not None or not self.maintained:
            return own
        return maintained_price(model)
