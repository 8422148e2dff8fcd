"""The full example's provider lines (config/example-full.toml), uncommented as an admin
would: every kind of `[providers.<name>]` entry is valid, and the agent's `provider`, `model`
and `fallback` make the chain they say."""

from __future__ import annotations

import re
from pathlib import Path

from config.loading import parse

ROOT = Path(__file__).resolve().parents[2]
# An agent's or [provider]'s model choice, commented in the example.
CHOICE = re.compile(r"^(\s*)# ((provider|model|fallback|allow_costlier|max_attempts) = .*)$")


def uncommented(text: str) -> str:
    """Each commented `[providers.<name>]` block (to its blank line) and model choice opened;
    a line commented twice (an alternative) stays a comment."""
    lines, inside = [], False
    for line in text.splitlines():
        inside = line.startswith("# [providers.") or (inside and bool(line.strip()))
        if inside:
            line = line.removeprefix("# ")
        lines.append(CHOICE.sub(r"\1\2", line))
    return "\n".join(lines)


def test_each_kind_of_provider_entry_and_an_agents_chain_are_valid() -> None:
    text = uncommented((ROOT / "config/example-full.toml").read_text())
    names = {name: f"value-of-{name}" for name in re.findall(r"\$\{(\w+)\}", text)}
    config = parse(text, Path("switchboard.toml"), names)
    kinds = {name: entry.kind for name, entry in config.providers.items()}
    assert kinds == {
        "haiku": "anthropic",
        "bedrock": "bedrock",
        "vertex": "vertex",
        "openrouter": "openai",
        "local": "openai",
    }
    assert config.provider.fallback == ["bedrock", "openrouter"]
    bedrock = config.providers["bedrock"]
    assert bedrock.aws_secret_access_key is not None and bedrock.api_key is None
    workspace = config.workspaces[0]
    links = config.chain_of(workspace, workspace.agents[0])
    assert [(link.name, link.connection.model) for link in links] == [
        ("openrouter", "openai/gpt-4.1-mini"),
        ("bedrock", "us.anthropic.claude-sonnet-4-5-20250929-v1:0"),
        ("local", "llama3.2"),
    ]
