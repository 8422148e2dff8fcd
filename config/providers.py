"""Which model answers an agent, and what stands in when it cannot (issue 41).

A connection says where a model is reached: `[provider]` is the default one; `[providers.<name>]`
entries are more (a second key, another base URL, Claude on Bedrock or Vertex, an
OpenAI-compatible server). An agent's section, else its workspace's, else `[provider]`, names
its `provider`, `model` and ordered `fallback` (entry names). `chain_of` resolves them into the
ordered list of connections a turn tries.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from pydantic import Field, SecretStr, model_validator

from config.prices import PriceConfig
from config.problems import Problem, did_you_mean, raise_all
from config.strict import Strict

ProviderKind = Literal["anthropic", "bedrock", "vertex", "openai", "offline"]
DEFAULT = "default"  # the name of `[provider]` in a `provider` or `fallback` list


class Connection(Strict):
    """Where a model is reached, and how."""

    kind: ProviderKind = "offline"
    model: str = "claude-sonnet-4-5"
    # anthropic, openai: the key (else the SDK reads ANTHROPIC_API_KEY / OPENAI_API_KEY) and
    # where the API is (else the SDK's own default or environment variable)
    api_key: SecretStr | None = None
    base_url: str | None = None
    # bedrock, vertex: the cloud region
    region: str | None = None
    # bedrock: an access key (else boto3's own chain: environment, profile, instance role)
    aws_access_key_id: SecretStr | None = None
    aws_secret_access_key: SecretStr | None = None
    aws_session_token: SecretStr | None = None
    # vertex: the Google Cloud project, and a token (else google-auth's default credentials)
    project_id: str | None = None
    access_token: SecretStr | None = None
    # openai: the tool-call ids the server takes ("nine": exactly nine letters and digits,
    # as Mistral's API requires)
    tool_call_ids: Literal["any", "nine"] = "any"
    # The model's context window in tokens; unset: known from the model's name (200,000 for
    # Claude models; a model the table does not know is taken as 200,000: set it for a small
    # local model).
    context_window: int | None = Field(None, ge=1024)
    # How long an attempt may say nothing (no word streamed): past it the next provider in the
    # fallback is tried. A long answer still streaming is never cut.
    attempt_timeout_s: float = Field(120.0, gt=0, le=3600)

    @model_validator(mode="after")
    def _reachable(self) -> Connection:
        if self.kind in ("bedrock", "vertex") and not self.region:
            raise ValueError(f'a {self.kind} provider needs region (e.g. region = "us-east-1")')
        if self.kind == "vertex" and not self.project_id:
            raise ValueError("a vertex provider needs project_id, the Google Cloud project")
        if self.kind == "bedrock" and (
            (self.aws_access_key_id is None) != (self.aws_secret_access_key is None)
        ):
            raise ValueError(
                "a bedrock provider needs both aws_access_key_id and aws_secret_access_key, "
                "or neither (boto3's own credentials are used then)"
            )
        return self


class ProviderEntry(Connection):
    """`[providers.<name>]`: another connection an agent or a fallback names. Its price may be
    set as the default's is (`[provider.prices]` holds every model's)."""


class ProviderConfig(Connection):
    """`[provider]`: the default connection (config/providers.py), its fallback, and what
    every turn is held to."""

    max_tokens: int = Field(4096, ge=1)
    # `[providers.<name>]` entries tried in order when this one cannot answer (a 429, an
    # outage, a spent quota; never a refused request); a fallback dearer than the provider it
    # stands in for (by the price table) only with allow_costlier.
    fallback: list[str] = []
    allow_costlier: bool = False
    # Attempts one model call makes down its fallback list, at most.
    max_attempts: int = Field(3, ge=1, le=20)
    # A provider that is overloaded or unreachable rests this long before one request probes
    # it again, twice as long after each failure in a row, at most 10 minutes.
    cooldown_s: float = Field(10.0, gt=0, le=600)
    # When a request would fill this share of the window (less max_tokens), the older part
    # of the conversation is summarized first; `keep_recent` of it stays word for word.
    compact_at: float = Field(0.7, gt=0.1, le=0.95)
    keep_recent: float = Field(0.25, gt=0.0, lt=0.9)
    # Dollars per million tokens, for a model the defaults (config/prices.py) do not know or
    # price differently: `[provider.prices."my-model"] input = 3.0, output = 15.0`.
    prices: dict[str, PriceConfig] = {}
    # Runaway guards: a turn ends, saying why, past this many model rounds, past this many
    # tokens (all kinds, counted as the provider reports them), or when the agent has called
    # the same tool with the same input this many times.
    max_rounds: int = Field(50, ge=1, le=1000)
    max_turn_tokens: int = Field(5_000_000, ge=1000)
    max_repeated_calls: int = Field(10, ge=2, le=100)

    @model_validator(mode="after")
    def _room_for_the_answer(self) -> ProviderConfig:
        if self.context_window is not None and self.max_tokens >= self.context_window // 2:
            raise ValueError(
                f"max_tokens ({self.max_tokens}) must be under half of context_window "
                f"({self.context_window}): the rest is the room for the conversation"
            )
        if self.keep_recent >= self.compact_at:
            raise ValueError(
                f"keep_recent ({self.keep_recent}) must be less than compact_at "
                f"({self.compact_at}): compaction has to free some room"
            )
        return self


class ModelChoice(Strict):
    """`provider`, `model` and `fallback` as an agent's or a workspace's section sets them; each
    unset key is taken from the section above."""

    provider: str | None = None  # a `[providers.<name>]` entry, or "default"
    model: str | None = None  # the model on that provider, instead of the entry's own
    fallback: list[str] | None = None  # entry names, in order


@dataclass(frozen=True, slots=True)
class Link:
    """One connection of a chain: its name (`default` or the entry's) and what it reaches."""

    name: str
    connection: Connection


def chain_of(
    default: Connection,
    default_fallback: Iterable[str],
    entries: dict[str, ProviderEntry],
    *choices: ModelChoice,
) -> list[Link]:
    """The connections an agent's turn tries, in order: its provider (with its model), then
    each fallback. `choices`: the agent's section first, then its workspace's."""
    # The model is read no higher than the section that chose the provider: a workspace's
    # model belongs to the workspace's provider, not to one an agent chose.
    chose = next((i for i, c in enumerate(choices) if c.provider), len(choices))
    provider = choices[chose].provider if chose < len(choices) else None
    model = next((c.model for c in choices[: chose + 1] if c.model), None)
    provider = provider or DEFAULT
    fallback = next((c.fallback for c in choices if c.fallback is not None), None)
    first = default if provider == DEFAULT else entries[provider]
    chain = [Link(provider, first.model_copy(update={"model": model}) if model else first)]
    for name in default_fallback if fallback is None else fallback:
        if name != provider:
            chain.append(Link(name, default if name == DEFAULT else entries[name]))
    return chain


def check_provider_names(
    entries: dict[str, ProviderEntry], default_fallback: list[str], named: dict[str, ModelChoice]
) -> None:
    """Every `provider` and `fallback` names an entry (or `default`); `named`: where each
    choice is written, for the error."""
    known = set(entries) | {DEFAULT}
    found: list[Problem | str] = []
    if DEFAULT in entries:
        found.append(f"[providers.{DEFAULT}] is taken: `{DEFAULT}` names [provider]")
    for where, names in [("[provider] fallback", default_fallback)] + [
        (f"{where} fallback", choice.fallback or []) for where, choice in named.items()
    ]:
        unknown = [n for n in names if n not in known]
        if unknown:
            found.append(
                f"{where} names {unknown}, not a [providers.<name>] entry"
                f"{did_you_mean(unknown[0], known)}"
            )
        if len(set(names)) != len(names):
            found.append(f"{where} names the same provider twice: {names}")
    for where, choice in named.items():
        if choice.provider is not None and choice.provider not in known:
            found.append(
                f"{where} provider {choice.provider!r} is not a [providers.<name>] entry "
                f"(known: {sorted(known)}){did_you_mean(choice.provider, known)}"
            )
    raise_all(found)
