"""`[workspaces.memory]`: on unless the workspace turns it off; from the file to each agent of
the runtime (the memory tools offered, whose memories); a defined tool may not take a memory
tool's name."""

from __future__ import annotations

from pathlib import Path

import pytest

from adapters.server.assembly import runtime_roster
from config import ConfigError
from config.loading import parse

ROOT = Path(__file__).resolve().parents[2]
DEFAULT = (ROOT / "config/switchboard.toml").read_text()
SOURCE = Path("switchboard.toml")
MEMORY_TOOLS = {"remember", "recall", "forget"}


def test_memory_is_on_by_default_and_each_agent_keeps_its_own() -> None:
    [agent], _ = runtime_roster(parse(DEFAULT, SOURCE, {}))
    assert agent.memory == agent.id
    assert set(agent.offered_tools) >= MEMORY_TOOLS
    assert MEMORY_TOOLS.isdisjoint(agent.tools), "offered by the section, not listed"
    child = agent.child(f"{agent.id}/child-1", [])
    assert child.memory == agent.id, "a child uses its root agent's memories"
    assert set(child.offered_tools) & MEMORY_TOOLS == {"recall"}


def test_turned_off_no_agent_is_offered_the_memory_tools() -> None:
    config = parse(DEFAULT + "\n  [workspaces.memory]\n  enabled = false\n", SOURCE, {})
    [agent], _ = runtime_roster(config)
    assert agent.memory is None
    assert set(agent.offered_tools).isdisjoint(MEMORY_TOOLS)
    assert set(agent.child(f"{agent.id}/child-1", []).offered_tools).isdisjoint(MEMORY_TOOLS)


def test_a_defined_tool_may_not_take_a_memory_tools_name() -> None:
    tool = (
        '\n  [[workspaces.tools]]\n  name = "recall"\n  description = "x"\n  command = ["true"]\n'
    )
    with pytest.raises(ConfigError) as caught:
        parse(DEFAULT + tool, SOURCE, {})
    assert "'recall' has the name of a built-in tool" in str(caught.value)


def test_a_typo_in_the_section_is_named() -> None:
    with pytest.raises(ConfigError) as caught:
        parse(DEFAULT + "\n  [workspaces.memory]\n  enable = false\n", SOURCE, {})
    assert "workspaces[0].memory.enable" in str(caught.value)
