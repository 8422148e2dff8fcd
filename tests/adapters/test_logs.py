"""`switchboard run` with Telegram, Slack and the Anthropic model, logging at debug level to
stderr and a file: no configured secret appears anywhere in its output, whatever library
wrote the line (HTTP clients log request URLs, and a Telegram URL carries the bot token)."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import signal
import stat
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from urllib.parse import quote

from adapters.server import logs
from config.schema import LoggingConfig
from tests.adapters.cli_process import read_until, start
from tests.adapters.mcp.test_mcp_tools import SERVER as MCP_SERVER
from tests.adapters.slack_harness import ACME_SECRET, ALICE, SlackSide
from tests.config_file import anthropic, workspace, write_config
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram


async def until(check: Any, what: str, limit_s: float = 20) -> None:
    deadline = time.monotonic() + limit_s
    while not check():
        assert time.monotonic() < deadline, f"{what} never happened"
        await asyncio.sleep(0.05)


async def test_no_secret_in_any_line_of_a_full_run(
    tmp_path: Path,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    slack_api: FakeSlack,
) -> None:
    telegram_api.token = "4242:secret-telegram-token-for-the-log-test"
    slack_token = next(t.token for t in slack_api.teams.values() if t.team_id == "T1")
    secrets = {
        "SB_MODEL_KEY": "sk-model-key-for-the-log-test",
        "SB_TELEGRAM_TOKEN": telegram_api.token,
        "SB_SLACK_TOKEN": slack_token,
        "SB_SLACK_SECRET": ACME_SECRET,
        "SB_MCP_TOKEN": "mcp-server-token-for-the-log-test",
    }
    log_file = tmp_path / "logs" / "switchboard.log"
    # An MCP server that prints the token it was given to its stderr.
    notes = tmp_path / "notes"
    server = {
        "name": "demo",
        "command": sys.executable,
        "args": [str(MCP_SERVER), "--notes", str(notes), "--say-env", "DEMO_TOKEN"],
        "env": {"DEMO_TOKEN": "${SB_MCP_TOKEN}"},
    }
    acme = workspace(
        "acme",
        [{"id": "alice", "primary": True, "telegram_user_id": 1001, "slack_user_id": ALICE}],
        telegram={"bot_token": "${SB_TELEGRAM_TOKEN}", "api_base_url": telegram_api.base_url},
        slack={
            "team_id": "T1",
            "bot_token": "${SB_SLACK_TOKEN}",
            "signing_secret": "${SB_SLACK_SECRET}",
            "api_base_url": slack_api.base_url,
        },
    )
    config = write_config(
        tmp_path / "switchboard.toml",
        db=tmp_path / "sb.db",
        provider=anthropic(anthropic_api.url, api_key="${SB_MODEL_KEY}"),
        logging={"level": "debug", "file": log_file},
        workspaces=[{**acme, "mcp_servers": [server]}],
    )
    # An error path logs too: the reply (not the progress message) meets a 502 once.
    telegram_api.fail("sendMessage", 502, "Bad Gateway", when=lambda p: "reply_markup" not in p)

    proc = await start("run", "--config", config, env=secrets)
    banner = await read_until(proc, "Switchboard is running")
    port = int(re.findall(r"http on 127\.0\.0\.1:(\d+)", banner)[0])
    telegram_api.push_message("hello from telegram", user=1001)
    slack = SlackSide(SimpleNamespace(port=port), slack_api)  # type: ignore[arg-type]
    await slack.say("hello from slack")
    await until(lambda: telegram_api.sent(), "a Telegram reply")
    await until(lambda: slack_api.posts("DALICE"), "a Slack reply")
    proc.send_signal(signal.SIGTERM)
    assert proc.stdout is not None
    output = (await asyncio.wait_for(proc.stdout.read(), 20)).decode()
    assert await asyncio.wait_for(proc.wait(), 20) == 0, output
    everything = banner + output + log_file.read_text()

    assert "/bot[redacted]/sendMessage" in everything, "the HTTP client's URL log was redacted"
    assert (
        "mcp server stderr server='demo' line='starting with DEMO_TOKEN=[redacted]'" in everything
    )
    for name, secret in secrets.items():
        for form in {secret, quote(secret), quote(secret, safe="")}:
            assert form not in everything, f"{name} appears in the output"
    assert "delivery retry" in output, "log lines go to stderr when no console chat is there"
    assert "delivery retry" in log_file.read_text(), "and to the configured file"


def test_one_line_per_event_its_traceback_below_it_and_the_file_rotates(tmp_path: Path) -> None:
    root = logging.getLogger()
    saved = root.handlers[:], root.level
    umask = os.umask(0o022)  # as most machines have it: files readable by all
    try:
        file = logs.configure(
            LoggingConfig(file=str(tmp_path / "sb.log"), max_bytes=2048, backups=2),
            secrets=["hunter2"],
            to_stderr=False,
            default_file=tmp_path / "unused.log",
        )
        log = logging.getLogger("switchboard.test")
        try:
            raise ValueError("token hunter2 was refused\nsecond line")
        except ValueError:
            log.exception(
                "send failed\nfor chat %s", 42, extra={"chat": 42, "url": "/bothunter2/x"}
            )
        log.info("after", extra={"n": 1})
        sent = "Traceback (most recent call last):\nOSError: disk full"  # by the door process
        log.error("request not stored", extra={"traceback": sent, "origin": "doors"})
        lines = (tmp_path / "sb.log").read_text().splitlines()
        for _ in range(100):
            log.info("filler", extra={"n": 1})
    finally:
        os.umask(umask)
        root.handlers[:], level = saved
        root.setLevel(level)
    assert file == tmp_path / "sb.log"
    assert (
        " ERROR switchboard.test: send failed\\nfor chat 42 chat=42 url='/bot[redacted]/x'"
        in (lines[0])
    ), "the message's own newline is escaped: one line per record"
    assert lines[1] == "    Traceback (most recent call last):", lines
    assert "    ValueError: token [redacted] was refused" in lines
    assert "    second line" in lines, "every line of the traceback is indented under its record"
    assert lines[-4].endswith(" INFO switchboard.test: after n=1")
    assert lines[-3].endswith(" ERROR switchboard.test: request not stored origin='doors'")
    assert lines[-2:] == ["    Traceback (most recent call last):", "    OSError: disk full"]
    assert "hunter2" not in "\n".join(lines)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sb.log", "sb.log.1", "sb.log.2"]
    modes = {oct(stat.S_IMODE(p.stat().st_mode)) for p in tmp_path.iterdir()}
    assert modes == {"0o600"}, "each file, the rotation's new ones too, is the user's alone"


def test_json_lines_for_a_collector(tmp_path: Path) -> None:
    root = logging.getLogger()
    saved = root.handlers[:], root.level
    try:
        logs.configure(
            LoggingConfig(file=str(tmp_path / "sb.log"), format="json"),
            secrets=["hunter2"],
            to_stderr=False,
            default_file=tmp_path / "unused.log",
        )
        log = logging.getLogger("switchboard.test")
        try:
            raise ValueError("token hunter2 was refused")
        except ValueError:
            log.exception("send failed\nfor chat %s", 42, extra={"chat": 42, "ids": ["a", "b"]})
    finally:
        root.handlers[:], level = saved
        root.setLevel(level)
    (line,) = (tmp_path / "sb.log").read_text().splitlines()
    entry = json.loads(line)
    assert list(entry)[:4] == ["time", "level", "logger", "message"]
    assert entry["level"] == "ERROR" and entry["logger"] == "switchboard.test"
    assert entry["message"] == "send failed\nfor chat 42"
    assert entry["chat"] == 42 and entry["ids"] == ["a", "b"]
    assert entry["traceback"].startswith("Traceback (most recent call last):\n")
    assert entry["traceback"].endswith("ValueError: token [redacted] was refused")


def test_a_secret_is_redacted_whatever_its_case() -> None:
    """python-telegram-bot capitalizes an error's first letter: a token quoted first in it
    comes out with its first letter changed."""
    redactor = logs.Redactor(["abc-secret-token"])
    assert redactor.redact("Abc-secret-token was refused") == "[redacted] was refused"


def test_a_pairing_code_is_never_logged() -> None:
    redactor = logs.Redactor([])
    said = "sendMessage text='Your pairing code is ABCD2345. Give it' and '/approve WXYZ7899'"
    assert redactor.redact(said) == (
        "sendMessage text='Your pairing code is [redacted]. Give it' and '/approve [redacted]'"
    )
    assert redactor.redact("pairing code 0OIL1234") == "pairing code 0OIL1234", "not a code"


def test_the_model_sdks_http_client_logs_no_line_per_request(tmp_path: Path) -> None:
    """The Anthropic and OpenAI SDKs send through httpx2, which logs each request at INFO:
    a line per model call (and its CPU: issue 45), wanted only when debugging."""
    root = logging.getLogger()
    saved = root.handlers[:], root.level
    try:
        for level in ("info", "debug"):
            logs.configure(
                LoggingConfig(file=str(tmp_path / "sb.log"), level=level),
                secrets=[],
                to_stderr=False,
                default_file=tmp_path / "unused.log",
            )
            debugging = level == "debug"
            assert logging.getLogger("httpx2").isEnabledFor(logging.INFO) is debugging, level
    finally:
        root.handlers[:], level = saved
        root.setLevel(level)
