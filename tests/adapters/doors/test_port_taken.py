"""A second `switchboard run` on a port a running one holds (the demo left running, say), with
the door process and inline: it says only that it cannot listen there and why, and exits
non-zero. Its door process once ended with its HTTP client still open, and the log line that
client's finalizer wrote went to a closed loop: a 20-line "Event loop is closed" traceback
before the message."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adapters.cli_process import run_to_end
from tests.adapters.doors.test_door_process import run
from tests.config_file import workspace, write_config
from tests.fakes.telegram_api import FakeTelegram


def config(folder: Path, telegram: FakeTelegram, port: int, intake: str) -> Path:
    bot = {
        "bot_token": telegram.token,
        "api_base_url": telegram.base_url,
        "mode": "webhook",
        "webhook_secret": "tg-webhook-secret",
        "chats": [-100],
    }
    acme = workspace("acme", [{"id": "alice", "primary": True}], telegram=bot)
    folder.mkdir()
    return write_config(
        folder / "switchboard.toml",
        db=folder / "sb.db",  # its own database: only the port is shared
        port=port,
        public_url="https://bot.example.com",
        workspaces=[acme],
        server={"intake": intake},
    )


@pytest.mark.parametrize("intake", ["process", "inline"])
async def test_a_second_run_on_a_taken_port_says_so_in_one_line_and_exits_non_zero(
    tmp_path: Path, telegram_api: FakeTelegram, intake: str
) -> None:
    first = await run(config(tmp_path / "first", telegram_api, 0, "process"), "first")
    try:
        second = config(tmp_path / "second", telegram_api, first.port, intake)
        status, out = await run_to_end("run", "--config", second)
    finally:
        await first.stop()
    assert status != 0, out
    said = [line for line in out.splitlines() if not _log_line(line)]
    assert said == [
        f"switchboard: cannot listen on 127.0.0.1:{first.port} (error while attempting to bind "
        f"on address ('127.0.0.1', {first.port}): address already in use); is another "
        "Switchboard running? Set [server] port in the config to use another port."
    ], out
    assert "Traceback" not in out and "Event loop is closed" not in out, out


def _log_line(line: str) -> bool:
    """One of its log lines (`2026-12-06T11:00:47 INFO ...`), not what it says to the admin."""
    return line[:4].isdigit() and line[4:5] == "-" and " INFO " in line[:40]
