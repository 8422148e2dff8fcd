"""`switchboard reload` says what changed, key by key, as an admin reads it: a running
`switchboard run`, its file edited, `switchboard reload` in another process. A secret's new
value is never shown: it is said to have changed."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

from tests.adapters.cli_process import ROOT, read_until, start, switchboard

DEFAULT = (ROOT / "config/switchboard.toml").read_text()
OLD_SECRET = "old-secret-value-1234"
NEW_SECRET = "new-secret-value-5678"
TOOL = "  timeout_s = 10\n"
PULSE = """
  [[workspaces.schedules]]
  id = "pulse"
  agent = "assistant"
  every = "1h"
  prompt = "Check in."
"""


async def test_reload_lists_each_changed_key_and_never_a_secret(tmp_path: Path) -> None:
    config = tmp_path / "switchboard.toml"
    text = DEFAULT.replace('path = "var/switchboard.db"', f'path = "{tmp_path / "sb.db"}"')
    text = text.replace(TOOL, f'{TOOL}  env = {{ API_KEY = "{OLD_SECRET}" }}\n')
    config.write_text(text)
    proc = await start("run", "--config", config)
    try:
        await read_until(proc, "Type a message")
        edited = (
            text.replace('queue_mode = "steer"', 'queue_mode = "followup"')
            .replace("timeout_s = 10", "timeout_s = 20")
            .replace(OLD_SECRET, NEW_SECRET)
            + PULSE
            + "\n[queue]\ncap = 7\n"
        )
        config.write_text(edited)
        result = switchboard("reload", "--config", config)
        assert result.returncode == 0, result.stdout + result.stderr
        assert result.stdout.splitlines() == [
            f"{config}: reloaded by process {proc.pid}",
            "workspaces changed: local",
            "  local: queue_mode: steer -> followup; tools.disk_usage.timeout_s: 10 -> 20;"
            " tools.disk_usage.env.API_KEY changed; schedules.pulse added",
            "needs a restart to take effect (running values kept): queue",
            "  queue: cap: 100 -> 7",
        ]
        assert NEW_SECRET not in result.stdout and OLD_SECRET not in result.stdout
        log = (tmp_path / "switchboard.log").read_text()
        assert "local: queue_mode: steer -> followup" in log, "the log says it too"
        assert NEW_SECRET not in log and OLD_SECRET not in log
    finally:
        proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(proc.wait(), 20)
