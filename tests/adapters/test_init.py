"""`switchboard init` as a newcomer meets it, typed into a real terminal (hidden prompts read
the terminal itself), against the fake Bot API, Slack Web API and Anthropic API, or a
loopback port nobody answers on (a platform that cannot be reached).

Every question is asked again after a wrong answer, saying what is expected; a token of the
wrong shape never leaves the machine; a token the platform refuses is asked again alone (the
other answers are kept); a platform that cannot be reached is not called a wrong token, and
the answer may be kept unchecked: the config says so and names the command that checks it,
and `switchboard run` says the platform could not be reached. The README's quick start,
typed in order, ends with the bot answering its paired operator."""

from __future__ import annotations

import asyncio
import re
import shlex
import signal
import socket
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.adapters.cli_process import SCRIPT, read_until, run_to_end, start
from tests.adapters.pty_process import PtyProcess
from tests.fakes.anthropic_api import FakeAnthropic, text
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until
from tests.test_readme import readme_commands

KEY = "-".join(["sk", "ant", "fake", "key", "of", "the", "init", "tests"])  # init checks the prefix
TOKEN = "1000001:fake-bot-token-of-the-init-tests-1"  # the shape @BotFather gives
UNKNOWN_TOKEN = "1000001:fake-bot-token-of-the-init-tests-0"  # that shape, no such bot
APP_TOKEN = "xapp-1-A0INIT-1234-abcdef"
SIGNING_SECRET = "8f742231b10e8888abcd99aaa85a5f23"  # 32 hex digits, as Slack gives it
BOB = 4242


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A loopback port bound but never listening: a connection to it is refused, as when a
    platform cannot be reached."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        yield held.getsockname()[1]


async def test_init_as_the_readme_shows_then_run_and_pair(
    tmp_path: Path, telegram_api: FakeTelegram, anthropic_api: FakeAnthropic
) -> None:
    telegram_api.token = TOKEN
    anthropic_api.api_key = KEY
    init, run, approve = (shlex.split(line) for line in readme_commands(quick_start=True))
    assert init[1:] == ["init"] and run[1:3] == ["run", "--config"], "the README's quick start"
    config = tmp_path / run[3]
    # As printed, plus where the platforms are (the fakes on loopback).
    urls = ["--telegram-api-base-url", telegram_api.base_url]
    terminal = await PtyProcess.start(
        *init[1:], *urls, "--anthropic-api-base-url", anthropic_api.url, cwd=tmp_path
    )
    try:
        await terminal.expect("Platforms: telegram, slack or both [telegram]: ")
        terminal.type("telegram")
        await terminal.expect("Telegram bot token (from @BotFather; hidden): ")
        terminal.type(UNKNOWN_TOKEN)
        await terminal.expect("wrong: Telegram refused the token: Unauthorized. Type it again")
        await terminal.expect("Telegram bot token (from @BotFather; hidden): ")
        terminal.type(TOKEN)
        await terminal.expect("ok: bot @switchboard_test_bot (id ")
        await terminal.expect("Model provider [anthropic]: ")
        terminal.type("")
        await terminal.expect("Anthropic API key (hidden; empty: the offline model): ")
        terminal.type(KEY)
        await terminal.expect("ok: model claude-sonnet-4-5 (Claude Sonnet 4.5)")
        await terminal.expect("(a rate limit, an outage, spent credit)? [y/N] ")
        terminal.type("")
        await terminal.expect("Your Telegram user id (empty: pair by DM instead): ")
        terminal.type("")
        status, done = await terminal.ended()
    finally:
        await terminal.close()
    assert status == 0, terminal.output
    assert f"Start your bot:  {SCRIPT} {shlex.join(run[1:])}" in done
    assert f"{SCRIPT} {shlex.join(approve[1:])}" in done
    assert "probe was skipped" not in done, "every answer was checked"
    assert TOKEN not in terminal.output and KEY not in terminal.output, "secrets are hidden"

    env = config.with_suffix(".env")
    assert stat.S_IMODE(env.stat().st_mode) == 0o600
    written = config.read_text()
    assert TOKEN not in written and KEY not in written and "Probe skipped" not in written
    assert "${SWITCHBOARD_TELEGRAM_TOKEN}" in written and "${ANTHROPIC_API_KEY}" in written
    # The suite's environment names a model key of its own, and the environment wins over
    # the env file: the key typed in is the one checked.
    mine = {"ANTHROPIC_API_KEY": KEY}
    status, out = await run_to_end("check-config", "--config", config, "--probe", env=mine)
    assert status == 0, out
    assert "ok    workspace main: telegram.bot_token: bot @switchboard_test_bot" in out

    # The printed command starts the bot; a DM gets a code; approving it makes an operator.
    config.write_text(written.replace("[storage]", "[server]\nport = 0\n\n[storage]"))
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


async def test_each_wrong_answer_is_asked_again_alone_and_a_platform_down_is_not_a_wrong_token(
    tmp_path: Path, closed_port: int, slack_api: FakeSlack, anthropic_api: FakeAnthropic
) -> None:
    anthropic_api.api_key = KEY
    team = next(t for t in slack_api.teams.values() if t.team_id == "T1")
    down = f"127.0.0.1:{closed_port}"
    terminal = await PtyProcess.start(
        "init",
        "--telegram-api-base-url",
        f"http://{down}/bot",
        "--slack-api-base-url",
        slack_api.base_url,
        "--anthropic-api-base-url",
        anthropic_api.url,
        cwd=tmp_path,
    )
    try:
        platforms = "Platforms: telegram, slack or both [telegram]: "
        await terminal.expect(platforms)
        terminal.type("telgram")
        await terminal.expect("'telgram' is not a platform (did you mean telegram?)")
        await terminal.expect(platforms)
        terminal.type("both")
        telegram = "Telegram bot token (from @BotFather; hidden): "
        await terminal.expect(telegram)
        terminal.type("")  # Enter
        await terminal.expect("nothing was given: a Telegram bot token is the bot's id, a colon")
        await terminal.expect(telegram)
        terminal.type(team.token)
        await terminal.expect("that is a Slack bot token, not a Telegram bot token")
        await terminal.expect(telegram)
        terminal.type(TOKEN)
        await terminal.expect(f"unreachable: could not reach Telegram at {down} (")
        await terminal.expect("; the Telegram bot token was not checked.")
        await terminal.expect("Keep it unchecked and go on? (n: type it again) [Y/n] ")
        terminal.type("")
        slack = "Slack bot token (xoxb-...; hidden): "
        await terminal.expect(slack)
        terminal.type(APP_TOKEN)
        await terminal.expect("that is a Slack app-level token, not a Slack bot token")
        assert slack_api.reached == [], "a token of the wrong shape never leaves this machine"
        await terminal.expect(slack)
        terminal.type(team.token)
        await terminal.expect("ok: team T1 (T1), bot user UBOTT1")
        await terminal.expect("(xapp-...; hidden; empty: events over HTTP): ")
        terminal.type("")
        await terminal.expect("Slack signing secret (hidden): ")
        terminal.type(SIGNING_SECRET)
        await terminal.expect("Model provider [anthropic]: ")
        terminal.type("antropic")
        await terminal.expect("'antropic' is not a provider (did you mean anthropic?)")
        await terminal.expect("Model provider [anthropic]: ")
        terminal.type("anthropic")
        model = "Anthropic API key (hidden; empty: the offline model): "
        await terminal.expect(model)
        terminal.type("sk-ant-api03-not-this-one")
        await terminal.expect(
            "wrong: Anthropic API 401 authentication_error: invalid x-api-key. Type it again;"
            " your other answers are kept."
        )
        await terminal.expect(model)
        terminal.type(KEY)
        await terminal.expect("ok: model claude-sonnet-4-5")
        await terminal.expect("spent credit)? [y/N] ")
        terminal.type("n")
        await terminal.expect("Your Telegram user id (empty: pair by DM instead): ")
        terminal.type("")
        await terminal.expect("Your Slack user id (U...; empty: pair by DM instead): ")
        terminal.type("UALICE")
        status, end = await terminal.ended()
    finally:
        await terminal.close()
    assert status == 0, terminal.output
    config = tmp_path / "config" / "bot.toml"
    check = f"{SCRIPT} check-config --config config/bot.toml --probe"
    assert "The probe was skipped for: Telegram bot token." in end and check in end, end
    for secret in (TOKEN, team.token, APP_TOKEN, SIGNING_SECRET, KEY):
        assert secret not in terminal.output, "secrets are typed hidden"
    written, env = config.read_text(), config.with_suffix(".env").read_text()
    assert f"#   Telegram bot token: could not reach Telegram at {down} (" in written
    assert f"# Check them with: {check}" in written
    for kept in (TOKEN, team.token, SIGNING_SECRET, KEY):
        assert kept in env, "every answer is kept, the one that could not be checked too"
    assert 'team_id = "T1"' in written and 'slack_user_id = "UALICE"' in written

    # The command it printed checks the token later; `run` says Telegram was not reached.
    mine = {"ANTHROPIC_API_KEY": KEY}
    status, out = await run_to_end(*shlex.split(check)[1:], env=mine, cwd=tmp_path)
    assert status == 1, out
    assert (
        "FAIL  workspace main: telegram.bot_token: not checked: could not reach Telegram at "
        f"{down} (" in out
    )
    assert "ok    workspace main: slack.bot_token: team T1" in out and "ok    provider" in out
    config.write_text(written.replace("[storage]", "[server]\nport = 0\n\n[storage]"))
    status, out = await run_to_end("run", "--config", config, env=mine, cwd=tmp_path)
    assert status == 2, out
    assert f"switchboard: workspace main: could not reach Telegram at {down} (" in out
    assert "telegram.bot_token was not checked and this bot did not start" in out
    assert "(Switchboard does not keep trying)" in out
    assert "refused to start" not in out and "refused the bot token" not in out


async def test_non_interactive_checks_shapes_first_and_can_write_without_the_network(
    tmp_path: Path, closed_port: int, telegram_api: FakeTelegram
) -> None:
    telegram_api.token = TOKEN
    config = tmp_path / "bot.toml"
    status, out = await run_to_end("init", "--help")
    assert "(default config/bot.toml" in out and "switchboard.toml" not in out, out
    assert "--no-probe" in out and "check-config --config PATH --probe" in out
    args = ["init", "--non-interactive", "--config", str(config), "--platform", "telegram"]
    here = ["--telegram-api-base-url", telegram_api.base_url]
    status, out = await run_to_end(*args, *here, "--telegram-token", APP_TOKEN)
    assert status == 2 and "nothing was sent or written:" in out, out
    assert "--anthropic-key, --offline or --provider KIND" in out
    assert "--operator-telegram-id, --operator-slack-id or --pairing" in out
    assert "--telegram-token: that is a Slack app-level token, not a Telegram bot token" in out
    assert telegram_api.reached == [] and not config.exists()
    args += ["--offline", "--operator-telegram-id", "1001"]
    status, out = await run_to_end(*args, *here, "--telegram-token", UNKNOWN_TOKEN)
    assert status == 2, out
    assert "Telegram bot token: Telegram refused the token: Unauthorized; nothing was" in out

    down = [*args, "--telegram-token", TOKEN]
    down += ["--telegram-api-base-url", f"http://127.0.0.1:{closed_port}/bot"]
    status, out = await run_to_end(*down)
    assert status == 2 and not config.exists(), out
    assert f"could not reach Telegram at 127.0.0.1:{closed_port}" in out
    assert "it was not checked, and nothing was written. Pass --no-probe" in out
    assert "refused" not in out
    status, out = await run_to_end(*down, "--no-probe")
    assert status == 0, out
    check = f"switchboard check-config --config {config} --probe"  # as it runs from here
    assert "The probe was skipped for: Telegram bot token." in out and check in out
    assert "Telegram bot token: the probe was skipped (--no-probe)" in config.read_text()
    status, out = await run_to_end(*down, "--no-probe")
    assert status == 2 and f"{config} exists; pass --force to replace it" in out

    written = config.read_text()
    assert "telegram_user_id = 1001" in written and TOKEN not in written


async def test_slack_tokens_are_checked_and_the_team_id_comes_from_slack(
    tmp_path: Path, slack_api: FakeSlack, anthropic_api: FakeAnthropic
) -> None:
    anthropic_api.api_key = KEY
    team = next(t for t in slack_api.teams.values() if t.team_id == "T1")
    team.app_token = APP_TOKEN
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
        "--anthropic-key",
        KEY,
        "--anthropic-api-base-url",
        anthropic_api.url,
        "--pairing",
    ]
    status, out = await run_to_end(
        *args, "--slack-app-token", team.token, "--slack-bot-token", APP_TOKEN
    )
    assert status == 2 and slack_api.reached == [], out
    assert "--slack-bot-token: that is a Slack app-level token, not a Slack bot token" in out
    assert "--slack-app-token: that is a Slack bot token, not a Slack app-level token" in out
    args += ["--slack-app-token", APP_TOKEN]
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
