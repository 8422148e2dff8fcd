"""The admin's file: `${NAME}`, unknown keys, cross-checks, and errors that say where."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from config import ConfigError, load, resolve_path
from config.loading import parse, variables

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


def test_the_full_examples_admin_lines_are_valid_once_uncommented() -> None:
    text = (ROOT / "config/example-full.toml").read_text()
    keys = r'\[admin\]|token = "\$|session_ttl_s|\[\[workspaces\.admins|id = "acme-lead"'
    admin_lines = rf"(?m)^(\s*)# (({keys}).*)$"
    opened = re.sub(admin_lines, r"\1\2", text)
    assert opened.count("[admin]") == 1 and "[[workspaces.admins]]" in opened
    names = {name: f"a-long-enough-value-of-{name}" for name in re.findall(r"\$\{(\w+)\}", opened)}
    config = parse(opened, SOURCE, names)
    assert config.console_enabled() and config.workspaces[0].admins[0].id == "acme-lead"


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
        "switchboard.toml: 1 environment variable(s) not set:\n"
        "  - TEAM (used by workspaces[0].agents[0].system_prompt)\n"
        "Set them, or write the values in the file ($${NAME} is a literal ${NAME})."
    )


def test_every_missing_variable_is_named_at_once() -> None:
    text = DEFAULT.replace('"You are a helpful operations agent."', '"${A} and ${B}"')
    with pytest.raises(ConfigError) as caught:
        parse(text, SOURCE, {"B": "set"})
    assert "1 environment variable(s) not set" in str(caught.value)
    with pytest.raises(ConfigError) as caught:
        parse(text, SOURCE, {})
    assert "  - A (used by" in str(caught.value) and "  - B (used by" in str(caught.value)


def test_a_doubled_dollar_is_a_literal_in_prompts_and_argv() -> None:
    text = DEFAULT.replace(
        '"You are a helpful operations agent."', '"Costs $$5; ${WHO} reads $${HOME}"'
    ).replace('command = ["df", "-h", "."]', 'command = ["bash", "-c", "echo $${HOME} ${WHO}"]')
    config = parse(text, SOURCE, {"WHO": "ops"})
    workspace = config.workspaces[0]
    assert workspace.agents[0].system_prompt == "Costs $$5; ops reads ${HOME}"
    assert workspace.tools[0].command == ["bash", "-c", "echo ${HOME} ops"]


def test_the_variables_a_file_uses_are_listed(tmp_path: Path) -> None:
    assert variables(ROOT / "config/switchboard.toml") == []
    assert variables(ROOT / "config/example-full.toml") == [
        "ACME_SLACK_APP_TOKEN",
        "ACME_SLACK_BOT_TOKEN",
        "ACME_SLACK_SIGNING_SECRET",
        "ACME_TELEGRAM_BOT_TOKEN",
        "ACME_TELEGRAM_WEBHOOK_SECRET",
    ]
    escaped = tmp_path / "c.toml"
    escaped.write_text('a = "$${NOT_ONE} ${ONE} ${ONE}"\n# ${IN_A_COMMENT}\n')
    assert variables(escaped) == ["ONE"]


@pytest.mark.parametrize(
    "change,expected",
    [
        (
            ("primary = true", "primary = false"),
            'workspaces[0].operators ("local"): exactly one operator must have primary = true'
            " (found 0)",
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
        (
            ('kind = "offline"', 'kind = "openia"'),
            "provider.kind: Input should be 'anthropic', 'bedrock'",
        ),
        (("timeout_s = 10", "timeout_s = -1"), "workspaces[0].tools[0].timeout_s"),
        (
            ("[[workspaces]]", '[admin]\ntoken = "hunter2"\n\n[[workspaces]]'),
            "admin.token: a token must be at least 16 characters",
        ),
        (
            (
                "[[workspaces.operators]]",
                '[[workspaces.admins]]\n  id = "a"\n  token = "same-token-0123456789"\n'
                '[[workspaces.admins]]\n  id = "b"\n  token = "same-token-0123456789"\n'
                "[[workspaces.operators]]",
            ),
            "two admins have the same token",
        ),
    ],
)
def test_mistakes_are_explained(change: tuple[str, str], expected: str) -> None:
    assert change[0] in DEFAULT
    with pytest.raises(ConfigError) as caught:
        parse(DEFAULT.replace(*change), SOURCE, {})
    assert expected in str(caught.value)


def test_not_toml_and_files_that_cannot_be_read(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not valid TOML"):
        parse("[server\n", SOURCE, {})
    with pytest.raises(ConfigError, match="nested too deeply"):
        parse("a = " + "[" * 5000 + "]" * 5000, SOURCE, {})
    with pytest.raises(ConfigError, match=r"no such file\. Pass --config PATH"):
        load(Path("/nonexistent/switchboard.toml"))
    with pytest.raises(ConfigError, match="cannot be read"):
        load(tmp_path)
    latin = tmp_path / "latin.toml"
    latin.write_bytes("a = 'caf\u00e9'".encode("latin-1"))
    with pytest.raises(ConfigError, match="not UTF-8"):
        load(latin)


def test_secrets_are_not_shown() -> None:
    text = DEFAULT.replace(
        '[workspaces.console]\n  operator = "you"',
        '[workspaces.console]\n  operator = "you"\n\n  [workspaces.telegram]\n'
        '  bot_token = "123456:super-secret-value"',
    )
    config = parse(text, SOURCE, {})
    assert "super-secret-value" not in repr(config) and "super-secret-value" not in str(config)
