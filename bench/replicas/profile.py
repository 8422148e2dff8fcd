"""A replica's CPU by area: py-spy samples its Python stacks (`record --format raw`, idle
threads left out, so a sample is the process on a CPU) and each sample is charged to an area.

A sample goes to the area of its innermost frame that names one (the libraries that are an area
of their own, and the project files the breakdown asks about); if none does, to its innermost
other Switchboard frame; if none, to aiohttp or the event loop. So `runtime/turn.py` calling a
helper module is the turn loop's, a helper calling psycopg is the store's, and json or pydantic
anywhere is json/pydantic's. "inside" is inclusive: the samples with the area anywhere on the
stack."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import signal
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

PY_SPY = Path(sys.executable).with_name("py-spy")
RATE = 250  # samples a second

# (area, what its frames' file paths contain), the specific areas
AREAS: list[tuple[str, tuple[str, ...]]] = [
    ("json/pydantic", ("/json/", "/pydantic/", "/pydantic_core/")),
    ("model request (anthropic SDK, httpx)", ("/anthropic/", "/httpx/", "/httpcore/")),
    ("outbox and slack_sdk send", ("/bridge/outbox.py", "/slack_sdk/")),
    ("ledger publishing/feed", ("/runtime/store/publishing.py",)),
    (STORE := "store (runtime/store, psycopg)", ("/runtime/store/", "/psycopg/", "/psycopg_pool/")),
    (
        "Slack intake: door, dedupe, bolt",
        ("/adapters/slack/", "/adapters/doors/", "/adapters/intake/", "/slack_bolt/"),
    ),
    ("bridge ingress", ("/bridge/ingress.py",)),
    ("dispatch", ("/bridge/dispatch.py",)),
    ("progress", ("/bridge/progress.py",)),
    ("runtime turn loop (turn.py, worker.py)", ("/runtime/turn.py", "/runtime/worker.py")),
    ("logging", ("/logging/",)),
]
PROJECT = ("/runtime/", "/bridge/", "/adapters/", "/config/")
ROOTS = ("/adapters/server/cli.py", "/adapters/server/run_cli.py", "/bench/")  # under every one
IDLE = ("EpollSelector.select", "select (", "poll (", "_worker (")  # waiting, taken as busy
OTHER_OURS = "other Switchboard code"
AIOHTTP = "aiohttp (server, client) under no frame of ours"
LOOP = "asyncio event loop, selectors"
OTHER = "other"


def _path(frame: str) -> str:
    """`function (path:line)` -> path"""
    return frame.rsplit("(", 1)[-1].rsplit(":", 1)[0] if frame.endswith(")") else frame


def _root(path: str) -> bool:
    return any(p in path for p in ROOTS)


def _store_detail(frames: list[str]) -> str:
    """Within the store: the PostgreSQL engine's method, else the store module."""
    for frame in reversed(frames):
        if "/runtime/store/postgres.py" in frame:
            return "postgres.py " + frame.split(" (")[0].split(".")[-1]
    for frame in reversed(frames):
        if "/runtime/store/" in frame:
            return _path(frame).rsplit("/", 1)[-1]
    return "psycopg, no store frame on the stack (its I/O callbacks)"


def _area(path: str) -> str | None:
    return next((name for name, parts in AREAS if any(p in path for p in parts)), None)


def classify(frames: list[str]) -> str:
    """The area of one sample; `frames` from the outermost to the innermost."""
    paths = [_path(f) for f in reversed(frames)]
    for path in paths:
        area = _area(path)
        if area is not None:
            return area
    if any(any(p in path for p in PROJECT) and not _root(path) for path in paths):
        return OTHER_OURS
    if any("/aiohttp/" in path for path in paths):
        return AIOHTTP
    if any("/asyncio/" in path or "selectors" in path for path in paths):
        return LOOP
    return OTHER


@dataclass
class Breakdown:
    samples: int
    own: Counter[str]  # samples charged to each area
    inside: Counter[str]  # samples with the area anywhere on the stack
    store: Counter[str]  # the store's samples, by what in it
    idle: int  # samples left out: the event loop waiting in epoll

    @classmethod
    def read(cls, raw: Path) -> Breakdown:
        own: Counter[str] = Counter()
        inside: Counter[str] = Counter()
        store: Counter[str] = Counter()
        total = idle = 0
        for line in raw.read_text(errors="replace").splitlines():
            stack, _, count = line.rpartition(" ")
            if not stack or not count.isdigit():
                continue
            frames = stack.split(";")
            n = int(count)
            if any(frames[-1].startswith(i) for i in IDLE):
                idle += n
                continue
            total += n
            area = classify(frames)
            own[area] += n
            if area == STORE:
                store[_store_detail(frames)] += n
            for name in {_area(_path(f)) for f in frames}:
                if name is not None:
                    inside[name] += n
        return cls(total, own, inside, store, idle)

    def table(self, cpu_ms_per_turn: float, cpu_s: float) -> str:
        """Markdown rows: each area's share of the samples, as ms of CPU per turn."""
        lines = [
            f"({self.samples:,} samples at {RATE}/s, {self.samples / RATE:.1f} s, against "
            f"{cpu_s:.1f} CPU s from /proc; {self.idle:,} more in epoll left out)\n",
            "| area | share | ms per turn | inside (inclusive) |",
            "|---|--:|--:|--:|",
        ]
        for area, n in self.own.most_common():
            share = n / self.samples
            inner = self.inside.get(area)
            inclusive = f"{100 * inner / self.samples:.0f}%" if inner else ""
            lines.append(
                f"| {area} | {100 * share:.1f}% | {share * cpu_ms_per_turn:.1f} | {inclusive} |"
            )
        lines.append("\nthe store's share, by where in it:\n")
        lines.append("| in the store | share of all | ms per turn |")
        lines.append("|---|--:|--:|")
        for what, n in self.store.most_common(8):
            share = n / self.samples
            lines.append(f"| {what} | {100 * share:.1f}% | {share * cpu_ms_per_turn:.1f} |")
        return "\n".join(lines)


class Spy:
    """py-spy recording one process until stopped."""

    def __init__(self, proc: asyncio.subprocess.Process, out: Path) -> None:
        self.proc, self.out = proc, out

    @classmethod
    async def start(cls, pid: int, out: Path) -> Spy:
        if not PY_SPY.exists() and shutil.which("py-spy") is None:
            raise RuntimeError("py-spy is not installed: `.venv/bin/pip install py-spy`")
        spy = str(PY_SPY) if PY_SPY.exists() else "py-spy"
        argv = [spy, "record", "--pid", str(pid), "--format", "raw", "--full-filenames"]
        argv += ["--rate", str(RATE), "--nonblocking", "--output", str(out)]
        proc = await asyncio.create_subprocess_exec(
            *argv, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
        )
        await asyncio.sleep(0.5)  # attached
        return cls(proc, out)

    async def stop(self) -> Breakdown:
        if self.proc.returncode is None:
            self.proc.send_signal(signal.SIGINT)  # py-spy writes its file, then exits
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.proc.wait(), 30)
        return Breakdown.read(self.out)
