"""`[[workspaces.bindings]]` and `respond_to`: an error names the binding and says how to fix
it; the example's commented bindings are valid once uncommented; which binding wins."""

from __future__ import annotations

from pathlib import Path

import pytest

from bridge.bindings import agent_for, respond_to
from bridge.types import Route
from config import ConfigError
from config.loading import parse

SOURCE = Path("switchboard.toml")
BASE = """
[[workspaces]]
id = "acme"
default_agent = "assistant"
{workspace}
  [workspaces.telegram]
  bot_token = "t"
  chats = [-100, -200]
  [workspaces.slack]
  team_id = "T1"
  bot_token = "b"
  signing_secret = "s"
  channels = ["COPS"]
  [[workspaces.operators]]
  id = "alice"
  primary = true
  [[workspaces.agents]]
  id = "assistant"
  [[workspaces.agents]]
  id = "ops"
  [[workspaces.agents]]
  id = "topic"
{bindings}
"""


def config(*bindings: str, workspace: str = "") -> str:
    tables = "\n".join(f"  [[workspaces.bindings]]\n{b}" for b in bindings)
    return BASE.format(workspace=workspace, bindings=tables)


def error_of(text: str) -> str:
    with pytest.raises(ConfigError) as caught:
        parse(text, SOURCE, {})
    return str(caught.value)


@pytest.mark.parametrize(
    ("binding", "said"),
    [
        (
            'agent = "nobody"\ntelegram_chat = -100',
            "bindings[0].agent 'nobody' is not one of the agents",
        ),
        (
            'agent = "ops"\ntelegram_chat = -999',
            "bindings[0].telegram_chat -999 is not an allowed chat: add it to chats",
        ),
        (
            'agent = "ops"\nslack_channel = "CRANDOM"',
            "bindings[0].slack_channel 'CRANDOM' is not an allowed channel",
        ),
        ('agent = "ops"\ntelegram_topic = 7', "telegram_topic needs the telegram_chat"),
        ('agent = "ops"', "a binding names exactly one place"),
        ('agent = "ops"\ndm = true\nslack_channel = "COPS"', "a binding names exactly one place"),
        ('agent = "ops"\ndm = true\nrespond_to = "mention"', "a DM is always answered"),
        ('agent = "ops"\nslack_channel = "COPS"\nrespond_to = "loud"', "respond_to"),
        ('agent = "ops"\ntelegram_chat = -100\nplatform = "slack"', "platform is for dm"),
        (
            'agent = "ops"\ndm = true\nplatform = "console"',
            "bindings[0].platform 'console': the workspace has no [workspaces.console] section",
        ),
    ],
)
def test_a_bad_binding_is_named_with_what_to_do(binding: str, said: str) -> None:
    assert said in error_of(config(binding))


def test_a_place_bound_twice_is_refused() -> None:
    said = error_of(
        config('agent = "ops"\ntelegram_chat = -100', 'agent = "topic"\ntelegram_chat = -100')
    )
    assert "bindings[1] binds telegram chat -100 again (bindings[0] already does)" in said


def test_respond_to_all_with_something_else_is_refused() -> None:
    said = error_of(config(workspace='respond_to = ["all", "mention"]'))
    assert 'respond_to "all" already takes every message' in said


def test_the_most_specific_binding_wins() -> None:
    parsed = parse(
        config(
            'agent = "ops"\ntelegram_chat = -100\nrespond_to = "mention"',
            'agent = "topic"\ntelegram_chat = -100\ntelegram_topic = 7',
            'agent = "ops"\ndm = true',
            'agent = "topic"\ndm = true\nplatform = "slack"',
            workspace='respond_to = "reply"',
        ),
        SOURCE,
        {},
    )
    acme = parsed.workspaces[0]

    def at(platform: str, chat: str, thread: str | None = None) -> Route:
        return Route(platform=platform, workspace_id="acme", conversation_id=chat, thread_id=thread)

    assert agent_for(acme, at("telegram", "-100", "7"), direct=False) == "topic"
    assert agent_for(acme, at("telegram", "-100", "9"), direct=False) == "ops"
    assert agent_for(acme, at("telegram", "-100"), direct=False) == "ops"
    assert agent_for(acme, at("telegram", "-200"), direct=False) == "assistant"
    assert agent_for(acme, at("telegram", "1001"), direct=True) == "ops"
    assert agent_for(acme, at("slack", "DALICE"), direct=True) == "topic"
    assert agent_for(acme, at("slack", "COPS", "1.2"), direct=False) == "assistant"
    assert list(respond_to(acme, at("telegram", "-100", "7"))) == ["mention"], "the chat's"
    assert list(respond_to(acme, at("telegram", "-200"))) == ["reply"], "the workspace's"
