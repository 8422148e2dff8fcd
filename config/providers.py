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
    # One attempt's limit, below a turn's: past it the next provider in the fallback is tried.
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
    provider = next((c.provider for c in choices if c.provider), DEFAULT)
    model = next((c.model for c in choices if c.model), None)
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
    if DEFAULT in entries:
        raise ValueError(f"[providers.{DEFAULT}] is taken: `{DEFAULT}` names [provider]")
    for where, names in [("[provider] fallback", default_fallback)] + [
        (f"{where} fallback", choice.fallback or []) for where, choice in named.items()
    ]:
        unknown = [n for n in names if n not in known]
        if unknown:
            raise ValueError(f"{where} names {unknown}, not a [providers.<name>] entry")
        if len(set(names)) != len(names):
            raise ValueError(f"{where} names the same provider twice: {names}")
    for where, choice in named.items():
        if choice.provider is not None and choice.provider not in known:
            raise ValueError(
                f"{where} provider {choice.provider!r} is not a [providers.<name>] entry "
                f"(known: {sorted(known)})"
            )
