"""`switchboard init` as a newcomer meets it: the README's quick start, its lines typed in
order in a real terminal (tmux), against the fake Bot API and the fake Anthropic API. A wrong
token is named at once, a right one shows the bot's username; the written config passes
`check-config --probe`, its env file is mode 0600 and the TOML holds no secret; the printed
`switchboard run` answers in Telegram once its user paired. The non-interactive form names
every missing flag."""

from __future__ import annotations

import asyncio
import re
import shlex
import shutil
import signal
import stat
import subprocess
import time
from pathlib import Path

from tests.adapters.cli_process import SCRIPT, read_until, run_to_end, start
from tests.fakes.anthropic_api import FakeAnthropic, text
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until
from tests.test_readme import readme_commands

TMUX = shutil.which("tmux")
KEY = "init-model-key-for-tests"
BOB = 4242


def screen(session: str) -> str:
    return subprocess.run(
        ["tmux", "capture-pane", "-p", "-t", session, "-S", "-200"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


async def shown(session: str, words: str, limit_s: float = 30) -> str:
    """The screen once `words` are on it (the fakes in this loop answer meanwhile)."""
    deadline = time.monotonic() + limit_s
    while words not in (now := screen(session)):
        assert time.monotonic() < deadline, f"{words!r} never appeared; the screen:\n{now}"
        await asyncio.sleep(0.1)
    return now


def tmux(*args: str, cwd: Path | None = None) -> None:
    subprocess.run(["tmux", *args], check=True, cwd=cwd)


def type_line(session: str, line: str) -> None:
    tmux("send-keys", "-t", session, "-l", line)
    tmux("send-keys", "-t", session, "Enter")


async def test_init_in_a_terminal_then_run_and_pair(
    tmp_path: Path, telegram_api: FakeTelegram, anthropic_api: FakeAnthropic
) -> None:
    assert TMUX, "tmux is part of this project's machine image; install it: apt-get install tmux"
    anthropic_api.api_key = KEY
    init, run, approve = (shlex.split(line) for line in readme_commands(quick_start=True))
    assert init[1:] == ["init"] and run[1:3] == ["run", "--config"], "the README's quick start"
    config = tmp_path / run[3]
    session = f"sb-init-{tmp_path.name}"
    # As printed, plus where the platforms are (the fakes on loopback).
    command = (
        f"'{SCRIPT}' {shlex.join(init[1:])} --telegram-api-base-url '{telegram_api.base_url}'"
        f" --anthropic-api-base-url '{anthropic_api.url}'; echo \"[exit $?]\"; sleep 60"
    )
    tmux("new-session", "-d", "-s", session, "-x", "160", "-y", "50", command, cwd=tmp_path)
    try:
        await shown(session, "Platforms: telegram, slack or both")
        type_line(session, "telegram")
        await shown(session, "Telegram bot token")
        type_line(session, "999:wrong-token")
        await shown(session, "wrong: Telegram refused the token: Unauthorized; try again")
        type_line(session, telegram_api.token)
        await shown(session, "ok: bot @switchboard_test_bot (id ")
        await shown(session, "Anthropic API key")
        type_line(session, KEY)
        await shown(session, "ok: model claude-sonnet-4-5 (Claude Sonnet 4.5)")
        await shown(session, "Your Telegram user id")
        type_line(session, "")
        done = await shown(session, "[exit 0]")
    finally:
        tmux("kill-session", "-t", session)
    assert f"Start your bot:  {SCRIPT} {shlex.join(run[1:])}" in done
    assert f"{SCRIPT} {shlex.join(approve[1:])}" in done
    assert telegram_api.token not in done and KEY not in done, "secrets are typed hidden"

    env = config.with_suffix(".env")
    assert stat.S_IMODE(env.stat().st_mode) == 0o600
    written = config.read_text()
    assert telegram_api.token not in written and KEY not in written
    assert "${SWITCHBOARD_TELEGRAM_TOKEN}" in written and "${ANTHROPIC_API_KEY}" in written
    # The suite's environment names a model key of its own, and the environment wins over
    # the env file: the key typed in is the one checked.
    mine = {"ANTHROPIC_API_KEY": KEY}
    status, out = await run_to_end("check-config", "--config", config, "--probe", env=mine)
    assert status == 0, out
    assert "ok    workspace main: telegram.bot_token: bot @switchboard_test_bot" in out

    # The printed command starts the bot; a DM gets a code; approving it makes an operator.
    (tmp_path / "config" / "bot.toml").write_text(
        written.replace("[storage]", "[server]\nport = 0\n\n[storage]")
    )
    proc = await start(*run[1:], cwd=tmp_path, env=mine)
    try:
        await read_until(proc, "Switchboard is running")
        telegram_api.push_message("hello bot", user=BOB)
        await until(lambda: any("pairing code is" in t for t in telegram_api.chat(BOB)), 20)
        code = re.findall(r"pairing code is ([A-Z2-9]{8})", " ".join(telegram_api.chat(BOB)))[0]
        typed = [code if word == "CODE" else word for word in approve[1:]]
        status, out = await run_to_end(*typed, cwd=tmp_path)
        assert status == 0, out
        await until(lambda: any("now an operator" in t for t in telegram_api.chat(BOB)), 20)
        anthropic_api.script = [text("Hi Bob, I am your agent.")]
        telegram_api.push_message("who are you?", user=BOB)
        await until(lambda: "Hi Bob, I am your agent." in telegram_api.chat(BOB), 20)
        assert "hello bot" not in str(anthropic_api.requests)
    finally:
        proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(proc.wait(), 20)


async def test_non_interactive_names_each_missing_flag_and_never_overwrites(
    tmp_path: Path, telegram_api: FakeTelegram, anthropic_api: FakeAnthropic
) -> None:
    config = tmp_path / "bot.toml"
    status, out = await run_to_end(
        "init", "--non-interactive", "--config", config, "--platform", "telegram"
    )
    assert status == 2, out
    assert "--telegram-token" in out and "--anthropic-key or --offline" in out
    assert "--operator-telegram-id, --operator-slack-id or --pairing" in out
    assert not config.exists()
    args = [
        "init",
        "--non-interactive",
        "--config",
        str(config),
        "--platform",
        "telegram",
        "--telegram-token",
        telegram_api.token,
        "--telegram-api-base-url",
        telegram_api.base_url,
        "--offline",
        "--operator-telegram-id",
        "1001",
    ]
    status, out = await run_to_end(*args)
    assert status == 0, out
    assert "telegram_user_id = 1001" in config.read_text() and "pairing code" not in out
    status, out = await run_to_end(*args)
    assert status == 2 and f"{config} exists; pass --force to replace it" in out
    wrong = [a if a != telegram_api.token else "999:wrong" for a in args]
    status, out = await run_to_end(*wrong, "--force")
    assert status == 2 and "Telegram refused the token: Unauthorized" in out
    status, out = await run_to_end("check-config", "--config", config)
    assert status == 0, out


async def test_slack_tokens_are_checked_and_the_team_id_comes_from_slack(
    tmp_path: Path, slack_api: FakeSlack, anthropic_api: FakeAnthropic
) -> None:
    team = next(t for t in slack_api.teams.values() if t.team_id == "T1")
    team.app_token = "xapp-1-init-test"
    config = tmp_path / "slack.toml"
    args = [
        "init",
        "--non-interactive",
        "--config",
        str(config),
        "--platform",
        "slack",
        "--slack-api-base-url",
        slack_api.base_url,
        "--slack-app-token",
        "xapp-1-init-test",
        "--anthropic-key",
        KEY,
        "--anthropic-api-base-url",
        anthropic_api.url,
        "--pairing",
    ]
    status, out = await run_to_end(*args, "--slack-bot-token", "xoxb-wrong")
    assert status == 2 and "Slack said invalid_auth" in out and not config.exists()
    status, out = await run_to_end(*args, "--slack-bot-token", team.token)
    assert status == 0, out
    assert "ok: team T1 (T1), bot user UBOTT1" in out and "ok: Socket Mode connections" in out
    written = config.read_text()
    assert 'team_id = "T1"' in written and team.token not in written
    assert "enabled = true" in written, "no user id given: pairing"
    status, out = await run_to_end(
        "check-config", "--config", config, "--probe", env={"ANTHROPIC_API_KEY": KEY}
    )
    assert status == 0 and "ok    workspace main: slack.app_token" in out, out
