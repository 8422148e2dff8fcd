"""Every `switchboard` command line the README prints, run as printed (from a copy of the
repository's config/ so that nothing it writes lands in the checkout): the README can never
again show a command that fails."""

from __future__ import annotations

import asyncio
import re
import shlex
import shutil
import signal
from pathlib import Path

import pytest

from config.loading import variables
from tests.adapters.cli_process import ROOT, read_until, start, switchboard
from tests.postgres import fresh_database

FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
ONLINE = ("[workspaces.slack]", "[workspaces.telegram]", 'kind = "anthropic"')


def readme_commands(*, quick_start: bool = False) -> list[str]:
    """The README's `switchboard` lines; the quick start's (your own bot, against the
    platforms) are run in order by `tests/adapters/test_init.py`, the others here."""
    commands = []
    for language, block in FENCE.findall((ROOT / "README.md").read_text()):
        if ("switchboard init" in block) != quick_start:
            continue
        if language not in ("", "sh", "bash", "shell", "console"):
            continue
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            program = next((w for w in words if not ASSIGNMENT.match(w)), "")
            if program in ("switchboard", ".venv/bin/switchboard"):
                commands.append(" ".join(line.split(" #")[0].split()))
    return commands


def test_the_readme_shows_the_commands_a_newcomer_needs() -> None:
    shown = " | ".join(readme_commands())
    for needed in ("check-config --config", "status --config", "run --config"):
        assert needed in shown, f"the README shows no `switchboard {needed}` line: {shown}"


def _prepare(line: str, tmp_path: Path) -> tuple[list[str], dict[str, str], Path]:
    """The command's argv, its environment (a dummy value for each `${VAR}` its config uses)
    and the config file it names, inside a copy of config/ in `tmp_path`. A PostgreSQL
    database the config names is replaced by a fresh one on the suite's own server."""
    shutil.copytree(ROOT / "config", tmp_path / "config", ignore=shutil.ignore_patterns("*.py"))
    words = shlex.split(line)
    env = dict(w.split("=", 1) for w in words if ASSIGNMENT.match(w) and "=" in w)
    argv = [w for w in words if not ASSIGNMENT.match(w)][1:]
    named = argv[argv.index("--config") + 1] if "--config" in argv else "config/switchboard.toml"
    config = tmp_path / named
    assert config.is_file(), f"the README's `{line}` names {named}, which the repository lacks"
    env |= {name: f"dummy-{name.lower()}" for name in variables(config)}
    text = config.read_text()
    if re.search(r'(?m)^url = "postgres', text):
        url = fresh_database()
        config.write_text(re.sub(r'(?m)^url = "postgres[^"]*"', lambda _: f'url = "{url}"', text))
    return argv, env, config


@pytest.mark.parametrize(
    "line", [c for c in readme_commands() if " run" not in c and " reload" not in c]
)
def test_each_readme_command_works_as_printed(line: str, tmp_path: Path) -> None:
    argv, env, _ = _prepare(line, tmp_path)
    result = switchboard(*argv, env=env, cwd=tmp_path)
    assert result.returncode == 0, f"`{line}` failed:\n{result.stderr}"
    assert result.stdout.strip(), f"`{line}` printed nothing"
    assert "dummy-" not in result.stdout, "a secret was printed"


def _serve_anywhere(config: Path) -> None:
    """Any free port: another Switchboard may be serving the default one on this machine."""
    text = config.read_text()
    if "[server]" in text:
        config.write_text(re.sub(r"(?m)^port = \d+", "port = 0", text))
    else:
        config.write_text(text + "\n[server]\nport = 0\n")


@pytest.mark.parametrize("line", [c for c in readme_commands() if " reload" in c])
async def test_each_readme_reload_command_reaches_the_running_process(
    line: str, tmp_path: Path
) -> None:
    argv, env, config = _prepare(line, tmp_path)
    _serve_anywhere(config)
    proc = await start("run", "--config", str(config), env=env, cwd=tmp_path)
    try:
        await read_until(proc, "Switchboard is running")
        result = await asyncio.to_thread(switchboard, *argv, env=env, cwd=tmp_path)
        assert result.returncode == 0, f"`{line}` failed:\n{result.stdout}{result.stderr}"
        assert "no workspace changed" in result.stdout, result.stdout
    finally:
        proc.send_signal(signal.SIGTERM)
        await read_until(proc, "Switchboard stopped")
        await asyncio.wait_for(proc.wait(), 20)


@pytest.mark.parametrize("line", [c for c in readme_commands() if " run" in c])
async def test_each_readme_run_command_serves_until_sigterm(line: str, tmp_path: Path) -> None:
    argv, env, config = _prepare(line, tmp_path)
    text = config.read_text()
    assert not any(part in text for part in ONLINE), f"`{line}` would reach the internet"
    _serve_anywhere(config)
    proc = await start(*argv, env=env, cwd=tmp_path)
    await read_until(proc, "Switchboard is running")
    proc.send_signal(signal.SIGTERM)
    out = await read_until(proc, "Switchboard stopped")
    assert await asyncio.wait_for(proc.wait(), 20) == 0, out
