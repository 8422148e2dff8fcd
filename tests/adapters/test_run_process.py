"""`switchboard run` as a real process: SIGTERM stops it cleanly, and nothing is lost."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CONFIG = """
[server]
port = 0

[storage]
path = "{db}"

[provider]
kind = "offline"

[[workspaces]]
id = "local"
default_agent = "assistant"

  [workspaces.console]
  operator = "you"

  [[workspaces.operators]]
  id = "you"
  primary = true

  [[workspaces.agents]]
  id = "assistant"
"""


async def start(config: Path) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "adapters.cli",
        "--config",
        str(config),
        "run",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


async def read_until(proc: asyncio.subprocess.Process, text: str) -> str:
    assert proc.stdout is not None
    seen = ""
    while text not in seen:
        line = await asyncio.wait_for(proc.stdout.readline(), 20)
        if not line:
            raise AssertionError(f"{text!r} never came; output:\n{seen}")
        seen += line.decode()
    return seen


async def test_sigterm_stops_cleanly_and_the_work_resumes(tmp_path: Path) -> None:
    config = tmp_path / "switchboard.toml"
    config.write_text(CONFIG.format(db=tmp_path / "sb.db"))
    proc = await start(config)
    assert proc.stdin is not None
    await read_until(proc, "Type a message")
    proc.stdin.write(b"work 4\n")
    await proc.stdin.drain()
    await read_until(proc, "Step 2 of 4")
    proc.send_signal(signal.SIGTERM)
    out = await read_until(proc, "Switchboard stopped")
    assert await asyncio.wait_for(proc.wait(), 20) == 0, out

    proc = await start(config)  # the interrupted turn picks up where it was
    assert proc.stdin is not None
    out = await read_until(proc, "Done: 4 step(s)")
    proc.stdin.close()
    assert await asyncio.wait_for(proc.wait(), 20) == 0
    assert "Step 1 of 4" not in out, "the finished steps were not run again"
