"""What a model's tokens cost, in US dollars per million tokens: defaults for Anthropic's
current models, which `[provider.prices."model-name"]` overrides or extends. A model is matched
by its longest listed prefix, so a dated name (`claude-sonnet-4-5-20250929`) takes its family's
price. The offline model is free."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pydantic import Field

from config.strict import Strict

MILLION = 1_000_000


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


# Anthropic's list prices (https://docs.anthropic.com/en/docs/about-claude/pricing).
DEFAULT_PRICES: dict[str, Price] = {
    "claude-opus-4-5": Price.of(5.0, 25.0),
    "claude-opus-4-1": Price.of(15.0, 75.0),
    "claude-opus-4": Price.of(15.0, 75.0),
    "claude-sonnet-4-5": Price.of(3.0, 15.0),
    "claude-sonnet-4": Price.of(3.0, 15.0),
    "claude-3-7-sonnet": Price.of(3.0, 15.0),
    "claude-haiku-4-5": Price.of(1.0, 5.0),
    "claude-3-5-haiku": Price.of(0.8, 4.0),
    "claude-3-haiku": Price.of(0.25, 1.25),
    "claude-3-opus": Price.of(15.0, 75.0),
    "offline": Price(0.0, 0.0, 0.0, 0.0),
}


@dataclass(frozen=True, slots=True)
class PriceTable:
    prices: Mapping[str, Price]

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
        """The price of `model`: its own, else its longest listed prefix's; None: unpriced."""
        matches = [name for name in self.prices if model == name or model.startswith(name + "-")]
        return self.prices[max(matches, key=len)] if matches else None
