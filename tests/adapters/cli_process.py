"""The installed `switchboard` console script, run as a person runs it: a subprocess, with
the arguments in the order they type them."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(sys.executable).with_name("switchboard")


def switchboard(
    *args: str | Path, env: Mapping[str, str] | None = None, cwd: Path = ROOT
) -> subprocess.CompletedProcess[str]:
    assert SCRIPT.exists(), f"{SCRIPT} is not installed: run `make test`, which installs it"
    return subprocess.run(
        [str(SCRIPT), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        stdin=subprocess.DEVNULL,
    )


async def start(
    *args: str | Path, env: Mapping[str, str] | None = None, cwd: Path = ROOT
) -> asyncio.subprocess.Process:
    """`switchboard ARGS` in the background; its stdout and stderr on one pipe."""
    return await asyncio.create_subprocess_exec(
        str(SCRIPT),
        *map(str, args),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        cwd=cwd,
        env={**os.environ, **(env or {})},
    )


async def read_until(proc: asyncio.subprocess.Process, text: str, limit_s: float = 30) -> str:
    """The process's output up to and including the line that contains `text`."""
    assert proc.stdout is not None
    seen = ""
    while text not in seen:
        line = await asyncio.wait_for(proc.stdout.readline(), limit_s)
        if not line:
            raise AssertionError(f"{text!r} never came; output:\n{seen}")
        seen += line.decode()
    return seen


async def run_to_end(
    *args: str | Path, env: Mapping[str, str] | None = None, limit_s: float = 60, cwd: Path = ROOT
) -> tuple[int, str]:
    """`switchboard ARGS` to its end, without blocking the loop (the fakes it talks to run
    in this loop): its exit status and everything it printed."""
    proc = await start(*args, env=env, cwd=cwd)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.close()
    output = await asyncio.wait_for(proc.stdout.read(), limit_s)
    return await asyncio.wait_for(proc.wait(), limit_s), output.decode()
