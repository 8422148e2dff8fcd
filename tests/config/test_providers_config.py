"""`[provider]`, `[providers.<name>]` and an agent's or workspace's `provider`, `model` and
`fallback` (issue 41): each agent's ordered chain as the admin wrote it, and every mistake
explained before anything starts."""

from __future__ import annotations

from pathlib import Path

import pytest

from adapters.server.providers import build_chains
from config import ConfigError
from config.loading import parse
from config.schema import SwitchboardConfig
from runtime.agents import AgentSpec
from runtime.clock import ManualClock
from runtime.context import Budget, window_of
from runtime.models import Models
from runtime.providers.offline import OfflineProvider

ROOT = Path(__file__).resolve().parents[2]
DEFAULT = (ROOT / "config/switchboard.toml").read_text()
SOURCE = Path("switchboard.toml")
ENTRIES = """
[providers.cheap]
kind = "openai"
base_url = "http://127.0.0.1:9/v1"
model = "small-model"

[providers.claude-on-bedrock]
kind = "bedrock"
region = "eu-central-1"
model = "anthropic.claude-sonnet-4-5-v1:0"
"""


def config_with(
    provider: str = "", agent: str = "", workspace: str = "", entries: str = ENTRIES
) -> SwitchboardConfig:
    text = DEFAULT.replace('[provider]\nkind = "offline"\n', f"[provider]\n{provider}")
    text = text.replace('queue_mode = "steer"\n', f'queue_mode = "steer"\n{workspace}')
    text = text.replace('  id = "assistant"\n', f'  id = "assistant"\n{agent}')
    return parse(text.replace("[[workspaces]]", entries + "\n[[workspaces]]", 1), SOURCE, {})


def chain(config: SwitchboardConfig) -> list[tuple[str, str, str]]:
    workspace = config.workspaces[0]
    links = config.chain_of(workspace, workspace.agents[0])
    return [(link.name, link.connection.kind, link.connection.model) for link in links]


def test_without_a_choice_an_agent_uses_the_default_and_its_fallback() -> None:
    config = config_with('kind = "anthropic"\nfallback = ["claude-on-bedrock", "cheap"]\n')
    assert chain(config) == [
        ("default", "anthropic", "claude-sonnet-4-5"),
        ("claude-on-bedrock", "bedrock", "anthropic.claude-sonnet-4-5-v1:0"),
        ("cheap", "openai", "small-model"),
    ]


def test_the_agents_choice_wins_over_its_workspaces_and_the_default() -> None:
    config = config_with(
        'kind = "anthropic"\nfallback = ["cheap"]\n',
        agent='  provider = "cheap"\n  model = "heartbeat-model"\n',
        workspace='fallback = ["claude-on-bedrock", "default"]\n',
    )
    assert chain(config) == [
        ("cheap", "openai", "heartbeat-model"),
        ("claude-on-bedrock", "bedrock", "anthropic.claude-sonnet-4-5-v1:0"),
        ("default", "anthropic", "claude-sonnet-4-5"),
    ]


def test_an_empty_fallback_turns_the_defaults_off() -> None:
    config = config_with('kind = "anthropic"\nfallback = ["cheap"]\n', agent="  fallback = []\n")
    assert chain(config) == [("default", "anthropic", "claude-sonnet-4-5")]


@pytest.mark.parametrize(
    ("provider", "agent", "entries", "said"),
    [
        ('fallback = ["nope"]\n', "", ENTRIES, "[provider] fallback names ['nope']"),
        ("", '  provider = "nope"\n', ENTRIES, "agent local/assistant provider 'nope'"),
        ('fallback = ["cheap", "cheap"]\n', "", ENTRIES, "names the same provider twice"),
        ("", "", '[providers.b]\nkind = "bedrock"\n', "a bedrock provider needs region"),
        ("", "", '[providers.v]\nkind = "vertex"\nregion = "x"\n', "needs project_id"),
        (
            "",
            "",
            '[providers.b]\nkind = "bedrock"\nregion = "x"\naws_access_key_id = "AKIA"\n',
            "both aws_access_key_id and aws_secret_access_key",
        ),
        ("", "", '[providers.default]\nkind = "offline"\n', "`default` names [provider]"),
    ],
)
def test_each_mistake_is_explained(provider: str, agent: str, entries: str, said: str) -> None:
    with pytest.raises(ConfigError) as caught:
        config_with(provider, agent=agent, entries=entries)
    assert said in str(caught.value)


@pytest.mark.parametrize(
    ("model", "window"),
    [
        ("claude-sonnet-4-5", 200_000),
        ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", 200_000),  # Bedrock
        ("claude-sonnet-4-5@20250929", 200_000),  # Vertex
        ("openai/gpt-4.1", 1_047_576),  # OpenRouter
        ("gpt-4o-mini", 128_000),
    ],
)
def test_a_models_window_is_known_by_its_name_on_every_platform(model: str, window: int) -> None:
    assert window_of(model, None) == window


def test_an_agents_turns_fit_the_smallest_window_of_its_chain() -> None:
    """A fallback to a small local model must not get a request the first model could take:
    the chain's window is its smallest, and a turn's budget is held to it."""
    small = '[providers.local]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'
    small += 'model = "llama3.1:8b"\ncontext_window = 8192\napi_key = "none"\n'
    config = config_with('kind = "anthropic"\nfallback = ["local"]\n', entries=small)
    chains = build_chains(config, ManualClock())
    [chain] = chains.values()
    assert chain.window == 8192
    agent = AgentSpec("local/assistant", chain="local/assistant")
    budget = Budget(200_000, 4096, 0.7, 0.25)
    assert Models(OfflineProvider(), chains).budget(agent, budget).window == 8192
    assert Models(OfflineProvider(), chains).budget(AgentSpec("other"), budget) == budget


def test_a_workspaces_model_goes_with_the_workspaces_provider_only() -> None:
    """The workspace runs `cheap` with its own model name; an agent that chooses Bedrock
    gets Bedrock's model, not a name Bedrock would refuse."""
    config = config_with(
        agent='  provider = "claude-on-bedrock"\n',
        workspace='provider = "cheap"\nmodel = "small-model-2"\n',
    )
    assert chain(config)[0] == ("claude-on-bedrock", "bedrock", "anthropic.claude-sonnet-4-5-v1:0")
