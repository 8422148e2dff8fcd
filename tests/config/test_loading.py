"""The admin's file: `${NAME}`, unknown keys, cross-checks, and errors that say where."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from config import ConfigError, load, resolve_path
from config.loading import parse

ROOT = Path(__file__).resolve().parents[2]
DEFAULT = (ROOT / "config/switchboard.toml").read_text()
SOURCE = Path("switchboard.toml")


def test_the_embedded_default_is_valid() -> None:
    config = load(ROOT / "config/switchboard.toml")
    assert config.provider.kind == "offline" and config.workspaces[0].console is not None


def test_the_full_example_is_valid() -> None:
    text = (ROOT / "config/example-full.toml").read_text()
    names = {name: f"value-of-{name}" for name in re.findall(r"\$\{(\w+)\}", text)}
    config = parse(text, SOURCE, names)
    slack = config.workspaces[0].slack
    assert slack is not None and slack.app_token is not None
    assert slack.bot_token.get_secret_value() == "value-of-ACME_SLACK_BOT_TOKEN"


def test_path_resolution_order() -> None:
    assert resolve_path("a.toml", {"SWITCHBOARD_CONFIG": "b.toml"}) == Path("a.toml")
    assert resolve_path(None, {"SWITCHBOARD_CONFIG": "b.toml"}) == Path("b.toml")
    assert resolve_path(None, {}) == Path("config/switchboard.toml")


def test_environment_variables_fill_strings_and_a_missing_one_is_named() -> None:
    text = DEFAULT.replace('"You are a helpful operations agent."', '"Hi ${TEAM}"')
    assert parse(text, SOURCE, {"TEAM": "ops"}).workspaces[0].agents[0].system_prompt == "Hi ops"
    with pytest.raises(ConfigError) as caught:
        parse(text, SOURCE, {})
    assert str(caught.value) == (
        "switchboard.toml: workspaces[0].agents[0].system_prompt uses ${TEAM}, but the "
        "environment variable TEAM is not set. Set it, or write the value in the file."
    )


@pytest.mark.parametrize(
    "change,expected",
    [
        (
            ("primary = true", "primary = false"),
            'workspaces[0] ("local"): exactly one operator must have primary = true (found 0)',
        ),
        (('"disk_usage"]', '"disk_usge"]'), "agent 'assistant' lists unknown tool 'disk_usge'"),
        (
            (
                '[workspaces.console]\n  operator = "you"',
                '[workspaces.telegram]\n  bot_token = "1:x"\n  mode = "webhook"',
            ),
            "webhook mode needs webhook_secret",
        ),
        (
            (
                '[workspaces.console]\n  operator = "you"',
                '[workspaces.slack]\n  team_id = "T1"\n  bot_token = "xoxb-1"',
            ),
            "set signing_secret (events over HTTP at /slack/events) or app_token (Socket Mode)",
        ),
        (('kind = "offline"', 'kind = "openai"'), "provider.kind: Input should be 'anthropic' or"),
        (("timeout_s = 10", "timeout_s = -1"), "workspaces[0].tools[0].timeout_s"),
    ],
)
def test_mistakes_are_explained(change: tuple[str, str], expected: str) -> None:
    assert change[0] in DEFAULT
    with pytest.raises(ConfigError) as caught:
        parse(DEFAULT.replace(*change), SOURCE, {})
    assert expected in str(caught.value)


def test_not_toml_and_missing_file() -> None:
    with pytest.raises(ConfigError, match="not valid TOML"):
        parse("[server\n", SOURCE, {})
    with pytest.raises(ConfigError, match=r"no such file\. Pass --config PATH"):
        load(Path("/nonexistent/switchboard.toml"))


def test_secrets_are_not_shown() -> None:
    text = DEFAULT.replace(
        '[workspaces.console]\n  operator = "you"',
        '[workspaces.console]\n  operator = "you"\n\n  [workspaces.telegram]\n'
        '  bot_token = "123456:super-secret-value"',
    )
    config = parse(text, SOURCE, {})
    assert "super-secret-value" not in repr(config) and "super-secret-value" not in str(config)
