"""`switchboard run` as a real process, started by its console script: SIGTERM stops it
cleanly, nothing is lost, and `switchboard status` then reports what it left."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

from tests.adapters.cli_process import read_until, start, switchboard
from tests.config_file import workspace, write_config


async def test_sigterm_stops_cleanly_and_the_work_resumes(tmp_path: Path) -> None:
    local = workspace("local", [{"id": "you", "primary": True}], console="you")
    config = write_config(tmp_path / "switchboard.toml", db=tmp_path / "sb.db", workspaces=[local])
    proc = await start("run", "--config", config)
    assert proc.stdin is not None
    out = await read_until(proc, "Type a message")
    assert f"Logs go to {tmp_path / 'switchboard.log'}." in out
    proc.stdin.write(b"work 4\n")
    await proc.stdin.drain()
    await read_until(proc, "Step 2 of 4")
    proc.send_signal(signal.SIGTERM)
    out = await read_until(proc, "Switchboard stopped")
    assert await asyncio.wait_for(proc.wait(), 20) == 0, out
    assert " INFO " not in out, "log lines never interleave with the console chat"
    log = (tmp_path / "switchboard.log").read_text()
    assert "http listening" in log
    assert " turn ended outcome='interrupted' " in log, "the log says the turn was cut off"

    status = switchboard("status", "--config", config)
    assert status.returncode == 0, status.stderr
    assert status.stdout.startswith("Switchboard is not running: no process has SQLite file")
    assert "Workspace local: 1 of 1 session(s) active.\n" in status.stdout, status.stdout
    left = "stopped mid-turn when Switchboard stopped; it goes on at the next start"
    assert f"  - console (you) \u00b7 assistant \u00b7 {left}\n" in status.stdout

    proc = await start("--config", config, "run")  # the interrupted turn picks up where it was
    assert proc.stdin is not None
    out = await read_until(proc, "Done: 4 step(s)")
    proc.stdin.close()
    assert await asyncio.wait_for(proc.wait(), 20) == 0
    assert "Step 1 of 4" not in out, "the finished steps were not run again"


FAULTS = Path(__file__).parent / "faults"  # its sitecustomize breaks the outbox's stop


async def test_a_part_that_fails_to_stop_is_named_and_every_other_part_stops(
    tmp_path: Path,
) -> None:
    """The bridge's outbox stops mid-way through the stop; it raises, as a bug would. The parts
    after it (the lease, the runtime) still stop: the turn under way is recorded as cut off, to go
    on at the next start, and the process exits with a status that says it was not clean."""
    local = workspace("local", [{"id": "you", "primary": True}], console="you")
    config = write_config(tmp_path / "switchboard.toml", db=tmp_path / "sb.db", workspaces=[local])
    python_path = os.pathsep.join(p for p in (str(FAULTS), os.environ.get("PYTHONPATH")) if p)
    env = {"PYTHONPATH": python_path, "SB_TEST_OUTBOX_FAILS_TO_STOP": "1"}
    proc = await start("run", "--config", config, env=env)
    assert proc.stdin is not None and proc.stdout is not None
    await read_until(proc, "Type a message")
    proc.stdin.write(b"work 4\n")
    await proc.stdin.drain()
    await read_until(proc, "Step 2 of 4")
    proc.send_signal(signal.SIGTERM)
    out = (await asyncio.wait_for(proc.stdout.read(), 30)).decode()
    assert await asyncio.wait_for(proc.wait(), 20) == 1, out
    assert "Switchboard stopped" in out
    assert "switchboard: outbox (RuntimeError) failed to stop; every other part stopped" in out, out
    log = (tmp_path / "switchboard.log").read_text()
    assert "part failed to stop; the others stop part='outbox'" in log, log
    assert "forced for the test: the outbox failed to stop" in log
    assert " turn ended outcome='interrupted' " in log, "the runtime stopped after the outbox"

    status = switchboard("status", "--config", config)
    assert status.returncode == 0, status.stderr
    left = "stopped mid-turn when Switchboard stopped; it goes on at the next start"
    assert f"  - console (you) \u00b7 assistant \u00b7 {left}\n" in status.stdout, status.stdout


def test_run_with_stdin_from_dev_null_stops_cleanly_and_says_why(tmp_path: Path) -> None:
    """A service or a detached shell gives the process /dev/null as its input. The terminal
    chat reads that as an input that ended at once, as an empty file: the run stops, saying why
    and how to serve without it, and its log holds no error (the event loop cannot wait on
    /dev/null: the chat used to log a traceback and wait forever)."""
    local = workspace("local", [{"id": "you", "primary": True}], console="you")
    config = write_config(tmp_path / "switchboard.toml", db=tmp_path / "sb.db", workspaces=[local])
    result = switchboard("run", "--config", config)
    assert result.returncode == 0, result.stderr
    assert "The input ended, so Switchboard stops" in result.stdout, result.stdout
    assert "set enabled = false under [workspaces.console]" in result.stdout
    assert result.stdout.rstrip().endswith("queued work resumes on the next start.")
    log = (tmp_path / "switchboard.log").read_text()
    assert "http listening" in log
    assert " ERROR " not in log and "Traceback" not in log, log
