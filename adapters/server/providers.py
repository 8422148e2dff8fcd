"""The config's connections turned into providers, and each agent's into its ordered chain
(config/providers.py, runtime/providers/fallback.py). An SDK is imported only where a
connection uses it: the Anthropic and OpenAI ones take about a second each."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from pydantic import SecretStr

from bridge.sessions import agent_key
from config.prices import PriceTable
from config.providers import DEFAULT, Connection, Link
from config.schema import SwitchboardConfig
from runtime.clock import Clock
from runtime.context import window_of
from runtime.errors import ProviderError
from runtime.providers.base import Provider
from runtime.providers.cooldowns import (
    Candidate,
    CooldownPolicy,
    Cooldowns,
    DisabledNotice,
    key_label,
)
from runtime.providers.fallback import Chain, FallbackPolicy, blended_price
from runtime.providers.offline import OfflineProvider

if TYPE_CHECKING:
    from runtime.providers.anthropic_clients import Client

log = logging.getLogger(__name__)

RETRIES = 5  # a provider's own attempts when nothing stands in for it


def build_provider(
    connection: Connection,
    clock: Clock | None = None,
    *,
    max_attempts: int = RETRIES,
    name: str | None = None,
) -> Provider:
    """One connection's provider; `max_attempts` of its own (1 in a chain: the chain moves);
    `name`: how its errors name it (a `[providers.<name>]` entry's; else its kind)."""
    key = connection.api_key.get_secret_value() if connection.api_key else None
    timeout_s = connection.attempt_timeout_s
    match connection.kind:
        case "anthropic" | "bedrock" | "vertex":
            from runtime.providers.anthropic import AnthropicProvider

            return AnthropicProvider(
                connection.model,
                max_attempts=max_attempts,
                clock=clock,
                timeout_s=timeout_s,
                client=anthropic_client_of(connection, key, timeout_s),
            )
        case "openai":
            from runtime.providers import tool_ids
            from runtime.providers.openai_chat import OpenAIChatProvider

            shape = tool_ids.NINE_ALNUM if connection.tool_call_ids == "nine" else tool_ids.OPENAI
            return OpenAIChatProvider(
                connection.model,
                api_key=key,
                base_url=connection.base_url,
                max_attempts=max_attempts,
                clock=clock,
                timeout_s=timeout_s,
                id_shape=shape,
                name=name or connection.kind,
            )
    return OfflineProvider(latency_s=0.3, clock=clock)


def _secret(value: SecretStr | None) -> str | None:
    return value.get_secret_value() if value is not None else None


def anthropic_client_of(connection: Connection, key: str | None, timeout_s: float) -> Client:
    """Claude through Anthropic's API, Amazon Bedrock or Google Vertex AI."""
    from runtime.providers import anthropic_clients as clients

    match connection.kind:
        case "bedrock":
            assert connection.region is not None  # the config requires it
            return clients.bedrock_client(
                connection.region,
                access_key=_secret(connection.aws_access_key_id),
                secret_key=_secret(connection.aws_secret_access_key),
                session_token=_secret(connection.aws_session_token),
                api_key=key,
                base_url=connection.base_url,
                timeout_s=timeout_s,
            )
        case "vertex":
            assert connection.region is not None and connection.project_id is not None
            return clients.vertex_client(
                connection.region,
                connection.project_id,
                access_token=_secret(connection.access_token),
                base_url=connection.base_url,
                timeout_s=timeout_s,
            )
    return clients.anthropic_client(key, connection.base_url, timeout_s)


def build_chains(
    config: SwitchboardConfig, clock: Clock, on_disabled: DisabledNotice | None = None
) -> dict[str, Chain]:
    """Each agent's chain, by its runtime id, where it differs from the default provider
    alone. Candidates of the same connection and model share one provider and one health."""
    prices = PriceTable.with_overrides(config.provider.prices)
    health = Cooldowns(clock, CooldownPolicy(open_s=config.provider.cooldown_s), on_disabled)
    policy = FallbackPolicy(
        max_attempts=config.provider.max_attempts,
        attempt_timeout_s=config.provider.attempt_timeout_s,
        probe_interval_s=config.provider.cooldown_s,  # a probe at most as often as it rests
        allow_costlier=config.provider.allow_costlier,
    )
    built: dict[tuple[str, str, int], Candidate] = {}

    def candidate(link: Link, attempts: int) -> Candidate:
        connection = link.connection
        found = built.get((link.name, connection.model, attempts))
        if found is None:
            key = connection.api_key.get_secret_value() if connection.api_key else None
            found = built[(link.name, connection.model, attempts)] = Candidate(
                link.name,
                key_label(key),
                connection.model,
                build_provider(
                    connection,
                    clock,
                    max_attempts=attempts,
                    name=None if link.name == DEFAULT else link.name,
                ),
                blended_price(prices, connection.model),
                connection.attempt_timeout_s,
            )
        return found

    chains: dict[str, Chain] = {}
    for workspace in config.workspaces:
        for agent in workspace.agents:
            links = config.chain_of(workspace, agent)
            if links == [Link(DEFAULT, config.provider)]:
                continue  # the default provider alone: the runtime's own
            attempts = RETRIES if len(links) == 1 else 1
            window = min(window_of(k.connection.model, k.connection.context_window) for k in links)
            candidates = [candidate(link, attempts) for link in links]
            chain = Chain(candidates, health, policy, window)
            chains[agent_key(workspace.id, agent.id)] = chain
    return chains


def tell_disabled(candidate: Candidate, error: ProviderError) -> None:
    """A provider refused its key: the admin reads it in the log (and on /metrics)."""
    log.error(
        "provider key refused; it is not tried again until the config is reloaded",
        extra={"provider": candidate.label, "error": str(error)},
    )
