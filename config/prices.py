"""What a model's tokens cost, in US dollars per million tokens.

A model's price is, in this order: the config's own (`[provider.prices."model-name"]`, for the
name as written, else for the name its maker gives it), the offline model's (free), or the
maintained table of the `genai-prices` package (offline data shipped in the package, with
cache-read and cache-write prices). Each platform's name is looked up where that platform's
price is, never a neighbour's:

- Anthropic's API: `claude-sonnet-4-5`, or a dated name of it (`claude-sonnet-4-5-20250929`);
- Claude on Bedrock: `anthropic.claude-sonnet-4-5-20250929-v1:0`, in an inference profile
  (`us.`, `eu.`, `global.`...) or an ARN naming one: AWS's own price (a regional endpoint may
  cost more than a global one), else Anthropic's for the same model;
- Claude on Vertex: `claude-sonnet-4-5@20250929`, at Anthropic's price;
- OpenAI: `gpt-4.1-mini`, or a dated name of it (`gpt-4.1-mini-2025-04-14`);
- OpenRouter: `anthropic/claude-sonnet-4.5`, OpenRouter's price, else its vendor's.

Any other model (`llama3.1:8b` on Ollama, `Qwen/Qwen2.5-7B-Instruct` on vLLM) has no price:
its calls count as $0 with a warning (check-config, and the log once), never a neighbour's
price, which the old prefix table charged (`claude-opus-4-6` as Opus 4, a newer name as
nothing known)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from functools import cache
from typing import Any

from genai_prices import data_snapshot
from pydantic import Field

from config.strict import Strict

MILLION = 1_000_000
MAINTAINED = "genai-prices"
ANTHROPIC, AWS, OPENAI, OPENROUTER = "anthropic", "aws", "openai", "openrouter"  # its tables

# Claude as Bedrock names it: the inference profile's scope (`us`, `global`...), the model,
# its version (`-v1:0`), perhaps at the end of an ARN.
_BEDROCK = re.compile(
    r"(?:arn:aws[\w-]*:bedrock:[^/]*/)?(?:(?P<scope>[a-z-]+)\.)?anthropic\."
    r"(?P<name>claude-[\w.-]+?)(?:-v\d+(?::\d+)?)?"
)
# Claude as Vertex names it: the model, perhaps its version (`-v2`), `@` and its date.
_VERTEX = re.compile(r"(?P<name>claude-[\w.-]+?)(?:-v\d+)?@(?P<date>\d{8})?\w*")
GLOBAL = "global"  # the scope of Bedrock's global inference profiles (no regional premium)


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


def claude_name(model: str) -> str | None:
    """The name Anthropic's API gives a Claude model that Bedrock or Vertex names its own
    way (`claude-sonnet-4-5-20250929`); None: `model` is not such a name."""
    bedrock = _BEDROCK.fullmatch(model)
    if bedrock is not None:
        return bedrock["name"]
    vertex = _VERTEX.fullmatch(model)
    if vertex is not None:
        return vertex["name"] + (f"-{vertex['date']}" if vertex["date"] else "")
    return None


def _vendor_name(model: str) -> tuple[str, str] | None:
    """An OpenRouter name's vendor and the vendor's own name of the model (Anthropic's with
    dashes: `anthropic/claude-sonnet-4.5` is `claude-sonnet-4-5`). OpenRouter's names are
    lower case: `Qwen/Qwen2.5-7B-Instruct` is a Hugging Face repository a server of one's
    own (vLLM) serves, whose price nobody's table knows."""
    vendor, slash, name = model.partition("/")
    if not slash or not vendor or not name or model != model.lower():
        return None
    return vendor, name.replace(".", "-") if vendor == ANTHROPIC else name


def other_names(model: str) -> list[str]:
    """The names `model` has at its maker, which a config's price may be set for."""
    claude = claude_name(model)
    if claude is not None:
        return [claude]
    vendor = _vendor_name(model)
    return [] if vendor is None else [vendor[1]]


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
    base = model_id.lower().removesuffix("-latest").removesuffix("-0")
    dated = r"(-0|-latest|-\d{8}|-\d{4}-\d{2}-\d{2})?"
    return re.fullmatch(re.escape(base) + dated, model.lower()) is not None


def _same_on_bedrock(model_id: str, model: str) -> bool:
    """AWS's table names the same Claude as `model`, at the same kind of endpoint (a global
    profile's price is not a regional one's)."""
    found, asked = _BEDROCK.fullmatch(model_id), _BEDROCK.fullmatch(model)
    if found is None or asked is None:
        return False
    if (found["scope"] == GLOBAL) != (asked["scope"] == GLOBAL):
        return False
    return _names_it(found["name"], asked["name"])


@dataclass(frozen=True, slots=True)
class _Lookup:
    table: str  # a provider of genai-prices
    model: str  # the name asked for there
    bedrock: bool = False  # the table names Claude as Bedrock does

    def names_it(self, model_id: str) -> bool:
        if self.bedrock:
            return _same_on_bedrock(model_id, self.model)
        return _names_it(model_id, self.model)


def _lookups(model: str) -> Iterator[_Lookup]:
    """Where `model`'s price may be, the platform's own table first."""
    claude = claude_name(model)
    if claude is not None:
        if _BEDROCK.fullmatch(model):
            yield _Lookup(AWS, model, bedrock=True)
        yield _Lookup(ANTHROPIC, claude)
        return
    vendor = _vendor_name(model)
    if vendor is not None:
        yield _Lookup(OPENROUTER, model)
        yield _Lookup(*vendor)
        return
    yield _Lookup(ANTHROPIC, model)
    yield _Lookup(OPENAI, model)


def _price_in(lookup: _Lookup) -> Price | None:
    snapshot = data_snapshot.get_snapshot()
    if not any(p.id == lookup.table for p in snapshot.providers):
        return None
    try:
        _, info = snapshot.find_provider_model(lookup.model, None, lookup.table, None)
    except LookupError:
        return None
    if not lookup.names_it(info.id):
        return None
    prices = info.get_prices(datetime.now(tz=UTC))
    input = _per_million(getattr(prices, "input_mtok", None))
    output = _per_million(getattr(prices, "output_mtok", None))
    if input is None or output is None:
        return None
    write = _per_million(getattr(prices, "cache_write_mtok", None))
    read = _per_million(getattr(prices, "cache_read_mtok", None))
    if write is None or read is None:
        # Claude's cache has Anthropic's rule; another model's cache, if any, no discount.
        claude = lookup.table in (ANTHROPIC, AWS) or info.id.lower().startswith("anthropic/")
        base = Price.of(input, output) if claude else Price(input, output, input, input)
        write = base.cache_write if write is None else write
        read = base.cache_read if read is None else read
    return Price(input, output, write, read, MAINTAINED)


@cache
def maintained_price(model: str) -> Price | None:
    """The maintained table's price of `model` now, or None when it does not list it."""
    return next((p for p in map(_price_in, _lookups(model)) if p is not None), None)


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
        """The price of `model` on whichever platform its name is (Anthropic's API, Bedrock,
        Vertex, OpenAI, OpenRouter): the config's for that name, else for its maker's name of
        it, else the maintained table's; None: unpriced."""
        for name in (model, *other_names(model)):
            own = self.prices.get(name)
            if own is not None:
                return own
        return maintained_price(model) if self.maintained else None
