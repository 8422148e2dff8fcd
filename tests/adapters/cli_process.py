"""The installed `switchboard` console script, run as a person runs it: a subprocess, with
the arguments in the order they type them."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tests.adapters.warm_cli import Child, WarmCli

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(sys.executable).with_name("switchboard")
COLD = bool(os.environ.get("SWITCHBOARD_TEST_COLD_CLI"))  # each command a fresh interpreter


def switchboard(
    *args: str | Path, env: Mapping[str, str] | None = None, cwd: Path = ROOT
) -> subprocess.CompletedProcess[str]:
    """`switchboard ARGS` to its end, stdin empty: its status, stdout and stderr. Forked from
    this worker's warm CLI (`warm_cli.py`) unless SWITCHBOARD_TEST_COLD_CLI is set."""
    assert SCRIPT.exists(), f"{SCRIPT} is not installed: run `make test`, which installs it"
    argv = [str(SCRIPT), *map(str, args)]
    full_env = {**os.environ, **(env or {})}
    if COLD:
        return subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=60,
            cwd=cwd,
            env=full_env,
            stdin=subprocess.DEVNULL,
        )
    (out, out_w), (err, err_w) = os.pipe(), os.pipe()
    child = _spawn(argv, full_env, cwd, out_w, err_w)
    killer = threading.Timer(60, child.kill)  # as subprocess.run's timeout
    killer.start()
    try:
        with ThreadPoolExecutor(2) as pool:
            stdout, stderr = pool.map(_read_all, (out, err))
        status = child.status()
    finally:
        killer.cancel()
    return subprocess.CompletedProcess(argv, status, stdout, stderr)


def _spawn(argv: list[str], env: Mapping[str, str], cwd: Path, out: int, err: int) -> Child:
    """Fork the command, stdin empty; the write ends given to it are closed here."""
    try:
        with open(os.devnull, "rb") as devnull:
            fds = [devnull.fileno(), out, err]
            return WarmCli.get().spawn(Path(argv[0]), argv[1:], env, cwd, fds)
    finally:
        os.close(out)
        if err != out:
            os.close(err)


def _read_all(fd: int) -> str:
    with open(fd, "rb") as pipe:
        return pipe.read().decode()


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
    in this loop): its exit status and everything it printed. Forked from this worker's warm
    CLI (`warm_cli.py`) unless SWITCHBOARD_TEST_COLD_CLI is set."""
    if COLD:
        proc = await start(*args, env=env, cwd=cwd)
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.close()
        output = await asyncio.wait_for(proc.stdout.read(), limit_s)
        return await asyncio.wait_for(proc.wait(), limit_s), output.decode()
    argv = [str(SCRIPT), *map(str, args)]
    out, out_w = os.pipe()
    full_env = {**os.environ, **(env or {})}
    child = await asyncio.to_thread(_spawn, argv, full_env, cwd, out_w, out_w)
    try:
        output = await asyncio.wait_for(asyncio.to_thread(_read_all, out), limit_s)
        return await asyncio.wait_for(asyncio.to_thread(child.status), limit_s), output
    finally:
        child.kill()  # ended already, unless it ran past the limit
