"""The `switchboard` console script as a person types it: each subcommand, `--config` before
or after it, a good file, a misspelt key, a missing file and a missing `${VAR}`."""

from __future__ import annotations

from importlib.metadata import version
from pathlib import Path

import pytest

from tests.adapters.cli_process import ROOT, switchboard

COMMANDS = ["run", "check-config", "status", "usage"]
DEFAULT = (ROOT / "config/switchboard.toml").read_text()


def a_config(tmp_path: Path, text: str = DEFAULT) -> Path:
    """The default config, its database in `tmp_path`."""
    path = tmp_path / "switchboard.toml"
    path.write_text(text.replace('path = "var/switchboard.db"', f'path = "{tmp_path / "sb.db"}"'))
    return path


@pytest.mark.parametrize("command", COMMANDS)
def test_the_help_of_each_subcommand_shows_config(command: str) -> None:
    result = switchboard(command, "--help")
    assert result.returncode == 0, result.stderr
    assert f"usage: switchboard {command} [-h] [--config PATH]" in result.stdout
    assert "$SWITCHBOARD_CONFIG" in result.stdout


def test_version_and_a_bare_command() -> None:
    assert switchboard("--version").stdout == f"switchboard {version('switchboard')}\n"
    bare = switchboard()
    assert bare.returncode == 2
    assert "the following arguments are required: COMMAND" in bare.stderr
    listed = switchboard("--help").stdout
    assert all(f"\n    {command}" in listed for command in COMMANDS), listed


def test_the_help_says_where_init_writes_and_what_each_key_does() -> None:
    top = " ".join(switchboard("--help").stdout.split())  # argparse's wrapping undone
    assert "else config/switchboard.toml: the offline demo; `switchboard init` writes" in top
    assert "config/bot.toml" in top
    run = " ".join(switchboard("run", "--help").stdout.split())
    assert "SIGTERM stops it" in run and "until SIGTERM or Ctrl-C" not in run
    assert "In the terminal chat ([console] in the config): Ctrl-C stops the agent's turn" in run
    assert "pressed twice on an empty line, quits; Ctrl-D quits at once" in run


@pytest.mark.parametrize("before", [False, True], ids=["after", "before"])
def test_check_config_takes_config_before_or_after(tmp_path: Path, before: bool) -> None:
    config = a_config(tmp_path)
    args = ["--config", config, "check-config"] if before else ["check-config", "--config", config]
    result = switchboard(*args)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"{config}: OK\n")
    assert "workspace local: console; queue mode steer" in result.stdout
    assert "agent assistant (default)" in result.stdout


@pytest.mark.parametrize("before", [False, True], ids=["after", "before"])
def test_status_takes_config_before_or_after(tmp_path: Path, before: bool) -> None:
    config = a_config(tmp_path)
    result = switchboard(
        *(["--config", config, "status"] if before else ["status", "--config", config])
    )
    assert result.returncode == 0, result.stderr
    nothing = "Switchboard is not running, and has not run here yet: no database at"
    assert result.stdout == f"{nothing} {tmp_path / 'sb.db'}.\n"
    assert not (tmp_path / "sb.db").exists(), "status only reads"


def test_the_environment_names_the_config_when_no_flag_does(tmp_path: Path) -> None:
    config = a_config(tmp_path)
    result = switchboard("check-config", env={"SWITCHBOARD_CONFIG": str(config)})
    assert result.stdout.startswith(f"{config}: OK\n")
    (tmp_path / "other").mkdir()
    other = a_config(tmp_path / "other")
    flag = switchboard("check-config", "--config", other, env={"SWITCHBOARD_CONFIG": str(config)})
    assert flag.stdout.startswith(f"{other}: OK\n")


@pytest.mark.parametrize("command", COMMANDS)
def test_a_misspelt_key_names_file_key_and_fix(tmp_path: Path, command: str) -> None:
    config = a_config(tmp_path, DEFAULT.replace("queue_mode =", "queue_mod ="))
    result = switchboard(command, "--config", config)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == (
        f"switchboard: {config}: 1 problem(s):\n"
        '  - workspaces[0].queue_mod ("local"): unknown key; did you mean queue_mode? (line 13)\n'
    )


@pytest.mark.parametrize("command", COMMANDS)
def test_a_missing_file_says_how_to_name_one(tmp_path: Path, command: str) -> None:
    result = switchboard(command, "--config", tmp_path / "nope.toml")
    assert result.returncode == 2
    assert result.stderr == (
        f"switchboard: {tmp_path / 'nope.toml'}: no such file."
        " Pass --config PATH or set SWITCHBOARD_CONFIG.\n"
    )


@pytest.mark.parametrize("command", ["run", "check-config"])
def test_a_missing_variable_is_named(tmp_path: Path, command: str) -> None:
    text = DEFAULT.replace('"You are a helpful operations agent."', '"You serve ${TEAM_NAME}."')
    config = a_config(tmp_path, text)
    result = switchboard(command, "--config", config)
    assert result.returncode == 2
    assert result.stderr == (
        f"switchboard: {config}: 1 environment variable(s) not set:\n"
        "  - TEAM_NAME (used by workspaces[0].agents[0].system_prompt)\n"
        "Set them, or write the values in the file ($${NAME} is a literal ${NAME}).\n"
    )
    assert not (tmp_path / "sb.db").exists(), "nothing started"


def test_status_needs_no_secret_but_the_database_it_reads(tmp_path: Path) -> None:
    secret = '\n[admin]\ntoken = "${ADMIN_TOKEN}"\n'
    config = a_config(tmp_path, DEFAULT.replace('"You are', '"${TEAM_NAME}: you are') + secret)
    result = switchboard("status", "--config", config)
    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        f"Switchboard is not running, and has not run here yet: no database at"
        f" {tmp_path / 'sb.db'}.\n"
        "Not set here, and not needed to read the status: ADMIN_TOKEN, TEAM_NAME.\n"
    )
    where = config.read_text().replace(str(tmp_path), "${DATA}")
    config.write_text(where)
    result = switchboard("status", "--config", config)
    assert result.returncode == 2 and "  - DATA (used by storage.path)\n" in result.stderr
    assert "  - ADMIN_TOKEN (used by admin.token)\n" in result.stderr, "every one, as before"
    assert switchboard("status", "--config", config, env={"DATA": str(tmp_path)}).returncode == 0


def test_check_config_says_where_the_admin_console_is(tmp_path: Path) -> None:
    path = a_config(tmp_path)
    assert (
        "admin console: off (set [admin] token"
        in switchboard("check-config", "--config", str(path)).stdout
    )
    path.write_text(path.read_text() + '\n[admin]\ntoken = "${ADMIN_TOKEN}"\n')
    result = switchboard(
        "check-config", "--config", str(path), env={"ADMIN_TOKEN": "a-token-of-twenty-chars"}
    )
    assert result.returncode == 0, result.stderr
    assert "admin console: http://127.0.0.1:8780/admin for the global admin" in result.stdout
    assert "a-token-of-twenty-chars" not in result.stdout
