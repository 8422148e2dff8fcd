"""`switchboard reload` as an admin runs it: a real `switchboard run` in one process, the
config file edited, `switchboard reload` in another."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

from adapters.server.reloading import read_verdict
from tests.adapters.cli_process import read_until, start, switchboard
from tests.config_file import workspace, write_config

DEFAULT_AGENT = 'default_agent = "assistant"'


async def test_reload_checks_the_file_then_the_running_process_applies_it(
    tmp_path: Path,
) -> None:
    local = workspace("local", [{"id": "you", "primary": True}], console="you")
    config = write_config(tmp_path / "switchboard.toml", db=tmp_path / "sb.db", workspaces=[local])
    idle = switchboard("reload", "--config", config)
    assert idle.returncode == 1
    assert f"no Switchboard is running with {tmp_path / 'sb.db'}" in idle.stdout

    proc = await start("run", "--config", config)
    assert proc.stdin is not None
    try:
        await read_until(proc, "Type a message")
        good = config.read_text()

        config.write_text(good.replace(DEFAULT_AGENT, 'default_agent = "nobody"'))
        refused = switchboard("reload", "--config", config)
        checked = switchboard("check-config", "--config", config)
        assert refused.returncode == 2
        assert refused.stderr == checked.stderr != ""
        assert not (tmp_path / "sb.db.reload.json").exists(), "nothing was sent"

        config.write_text(good.replace(DEFAULT_AGENT, f'{DEFAULT_AGENT}\nqueue_mode = "followup"'))
        applied = switchboard("reload", "--config", config)
        assert applied.returncode == 0, applied.stdout + applied.stderr
        assert f"{config}: reloaded by process {proc.pid}" in applied.stdout
        assert "workspaces changed: local" in applied.stdout

        config.write_text(good + "\n[queue]\ncap = 7\n")  # not live: said, and kept as running
        before = read_verdict(tmp_path / "sb.db")
        assert before is not None
        proc.send_signal(signal.SIGHUP)  # SIGHUP alone reloads too
        for _ in range(1000):
            verdict = read_verdict(tmp_path / "sb.db")
            if verdict is not None and verdict.seq > before.seq:
                break
            await asyncio.sleep(0.02)
        assert verdict is not None and verdict.seq == before.seq + 1, "the SIGHUP reloaded"
        assert verdict.report.ok and verdict.report.restart_needed == ("queue",)
        again = switchboard("reload", "--config", config)
        assert again.returncode == 0, again.stdout + again.stderr
        assert "needs a restart to take effect (running values kept): queue" in again.stdout

        elsewhere = tmp_path / "copy.toml"  # checked here, but the process reads its own
        elsewhere.write_text(config.read_text())
        noted = switchboard("reload", "--config", elsewhere)
        assert noted.returncode == 0, noted.stdout + noted.stderr
        assert f"reads its config from {config.resolve()}, not {elsewhere}" in noted.stdout

        proc.stdin.write(b"work 2\n")  # the chat goes on
        await proc.stdin.drain()
        await read_until(proc, "Done: 2 step(s)")
        log = (tmp_path / "switchboard.log").read_text()
        assert (
            "config applied what='workspaces changed: local; local: queue_mode: steer -> followup'"
            " changed=['local']" in log
        )
        assert (
            "config applied what='no workspace changed; needs a restart to take effect"
            " (running values kept): queue; queue: cap: 100 -> 7' restart_needed=['queue']" in log
        ), "each reload is one line saying what it changed"
    finally:
        proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(proc.wait(), 20)
