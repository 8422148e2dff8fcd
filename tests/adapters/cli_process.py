"""The installed `switchboard` console script, run as a person runs it: a subprocess, with
the arguments in the order they type them."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import signal
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
    if COLD or _fresh_interpreter_needed(env):
        return _cold(argv, full_env, cwd)
    return _forked(argv, full_env, cwd)


def python_module(
    module: str, *args: str | Path, env: Mapping[str, str], cwd: Path = ROOT
) -> subprocess.CompletedProcess[str]:
    """`python -m MODULE ARGS` to its end, stdin empty, in exactly the environment `env`:
    forked from the warm CLI as `switchboard` is, unless SWITCHBOARD_TEST_COLD_CLI is set."""
    if COLD or _fresh_interpreter_needed(env):
        return _cold([sys.executable, "-m", module, *map(str, args)], env, cwd)
    spec = importlib.util.find_spec(module + ".__main__") or importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None, f"no module {module}"
    return _forked([spec.origin, *map(str, args)], env, cwd, module=module)


def _cold(argv: list[str], env: Mapping[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """A fresh interpreter, as a person's shell starts it."""
    return subprocess.run(
        argv,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
    )


def _forked(
    argv: list[str], env: Mapping[str, str], cwd: Path, module: str | None = None
) -> subprocess.CompletedProcess[str]:
    (out, out_w), (err, err_w) = os.pipe(), os.pipe()
    child = _spawn(argv, env, cwd, out_w, err_w, module)
    killer = threading.Timer(60, child.kill)  # as subprocess.run's timeout
    killer.start()
    try:
        with ThreadPoolExecutor(2) as pool:
            stdout, stderr = pool.map(_read_all, (out, err))
        status = child.status()
    finally:
        killer.cancel()
    return subprocess.CompletedProcess(argv, status, stdout, stderr)


def _spawn(
    argv: list[str], env: Mapping[str, str], cwd: Path, out: int, err: int, module: str | None
) -> Child:
    """Fork the command, stdin empty; the write ends given to it are closed here."""
    try:
        with open(os.devnull, "rb") as devnull:
            fds = [devnull.fileno(), out, err]
            return Child(WarmCli.get().spawn(Path(argv[0]), argv[1:], env, cwd, fds, module))
    finally:
        os.close(out)
        if err != out:
            os.close(err)


def _read_all(fd: int) -> str:
    with open(fd, "rb") as pipe:
        return pipe.read().decode()


async def start(
    *args: str | Path, env: Mapping[str, str] | None = None, cwd: Path = ROOT
) -> Running:
    """`switchboard ARGS` in the background; its stdout and stderr on one pipe. Forked from
    this worker's warm CLI (`warm_cli.py`) unless SWITCHBOARD_TEST_COLD_CLI is set or the
    command is given a variable only a fresh interpreter reads."""
    argv = [str(SCRIPT), *map(str, args)]
    full_env = {**os.environ, **(env or {})}
    if COLD or _fresh_interpreter_needed(env):
        return await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            cwd=cwd,
            env=full_env,
        )
    return await WarmProcess.start(argv, full_env, cwd)


def _fresh_interpreter_needed(env: Mapping[str, str] | None) -> bool:
    """Python reads its own variables (PYTHONPATH and the like) only as it starts."""
    return any(name.startswith("PYTHON") for name in env or {})


class WarmProcess:
    """A command forked from the warm CLI, driven as an `asyncio.subprocess.Process` is: its
    pid, stdin and stdout as streams, `returncode` once it has ended, `wait`, signals."""

    def __init__(
        self,
        pid: int,
        stdin: asyncio.StreamWriter,
        stdout: asyncio.StreamReader,
        ended: asyncio.Task[int],
    ) -> None:
        self.pid = pid
        self.stdin = stdin
        self.stdout = stdout
        self._ended = ended

    def __del__(self) -> None:
        """As asyncio kills a child whose transport is dropped: none outlives its test."""
        if not self._ended.done():
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)

    @classmethod
    async def start(cls, argv: list[str], env: Mapping[str, str], cwd: Path) -> WarmProcess:
        loop = asyncio.get_running_loop()
        server = await asyncio.to_thread(WarmCli.get)  # its first start imports for seconds
        (stdin_r, stdin_w), (stdout_r, stdout_w) = os.pipe(), os.pipe()
        try:
            conn = server.spawn(Path(argv[0]), argv[1:], env, cwd, [stdin_r, stdout_w, stdout_w])
        finally:
            os.close(stdin_r)
            os.close(stdout_w)
        conn.setblocking(False)
        said, asking = await asyncio.open_unix_connection(sock=conn)
        pid = int(await said.readline())
        stdout = asyncio.StreamReader()
        await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(stdout), os.fdopen(stdout_r, "rb", buffering=0)
        )
        writing, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(stdin_w, "wb", buffering=0)
        )
        stdin = asyncio.StreamWriter(writing, protocol, None, loop)
        return cls(pid, stdin, stdout, loop.create_task(_status(said, asking)))

    @property
    def returncode(self) -> int | None:
        return self._ended.result() if self._ended.done() else None

    async def wait(self) -> int:
        return await asyncio.shield(self._ended)

    def send_signal(self, sig: int) -> None:
        if self.returncode is not None:  # its pid may be another process's by now
            raise ProcessLookupError(self.pid)
        os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


async def _status(said: asyncio.StreamReader, asking: asyncio.StreamWriter) -> int:
    """The exit status the server writes once the command has ended. (`asking` is held
    until then: a dropped writer closes the connection.)"""
    try:
        line = await said.readline()
    finally:
        asking.close()
    assert line, "the warm CLI server ended before the command did"
    return int(line)


Running = asyncio.subprocess.Process | WarmProcess


async def read_until(proc: Running, text: str, limit_s: float = 30) -> str:
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
    """`switchboard ARGS` to its end, stdin empty, without blocking the loop (the fakes it
    talks to run in this loop): its exit status and everything it printed."""
    proc = await start(*args, env=env, cwd=cwd)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.close()
    try:
        output = await asyncio.wait_for(proc.stdout.read(), limit_s)
        return await asyncio.wait_for(proc.wait(), limit_s), output.decode()
    finally:
        if proc.returncode is None:  # it ran past the limit
            proc.kill()
