"""`switchboard reload` and SIGHUP: the running process reloads its config file and writes
its verdict beside the database (`<db>.reload.json`), where the command reads it back.

A verdict is logged too, never with a value from the file: its errors name keys and
problems (and the log's own filter redacts secrets besides)."""

from __future__ import annotations

import asyncio
import fcntl
import json
import logging
import os
import signal
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from config.diff import ReloadReport

log = logging.getLogger(__name__)

WAIT_S = 30.0  # how long `switchboard reload` waits for the running process's verdict


class Verdict(BaseModel):
    """What the running process wrote after a reload: who, which one, and its report."""

    pid: int
    seq: int
    path: str  # the file the process read (its own, whatever file the command checked)
    report: ReloadReport


def report_fields(report: ReloadReport) -> dict[str, Any]:
    """A reload's log fields: what it changed, in a few words (`what`) and by name; or why it
    was refused (`errors`)."""
    if not report.ok:
        return {"errors": report.errors}
    named = {
        "changed": report.changed,
        "added": report.added,
        "removed": report.removed,
        "restart_needed": report.restart_needed,
    }
    what = "; ".join(line.strip() for line in report.lines())
    return {"what": what} | {k: list(v) for k, v in named.items() if v}


def holder(database: str | Path) -> int | None:
    """The pid of the process running the database; None when none runs it. Read from the
    runtime's lock file (`runtime/store/sqlite_db.py`, `lock`: held while a process runs it, with
    its pid inside); read here so that the command needs no runtime import (seconds)."""
    try:
        handle = open(f"{database}.lock", "rb")  # noqa: SIM115 - closed below
    except FileNotFoundError:
        return None
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:  # held: read who holds it
            text = handle.read().decode(errors="replace").strip()
            return int(text) if text.isdigit() else 0
        fcntl.flock(handle, fcntl.LOCK_UN)
        return None


def verdict_path(database: str | Path) -> Path:
    return Path(f"{database}.reload.json")


def write_verdict(
    database: str | Path, seq: int, report: ReloadReport, source: Path | None
) -> None:
    """Atomically: the command never reads half a verdict."""
    path = verdict_path(database)
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    read = str(source.resolve()) if source else ""
    verdict = Verdict(pid=os.getpid(), seq=seq, path=read, report=report)
    temporary.write_text(verdict.model_dump_json(), encoding="utf-8")
    temporary.replace(path)


def read_verdict(database: str | Path) -> Verdict | None:
    try:
        return Verdict.model_validate_json(verdict_path(database).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValidationError, json.JSONDecodeError):
        return None


async def ask_for_reload(pid: int, database: str | Path) -> Verdict | None:
    """Send SIGHUP to `pid` and wait for its new verdict; None if none came in time."""
    before = read_verdict(database)
    os.kill(pid, signal.SIGHUP)
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        verdict = read_verdict(database)
        if verdict is not None and verdict.pid == pid and verdict != before:
            return verdict
        await asyncio.sleep(0.1)
    return None


def on_sighup(
    reload: Callable[[], Awaitable[ReloadReport]], database: str | Path, source: Path | None
) -> asyncio.Event:
    """SIGHUP reloads (one at a time, in order) and leaves its verdict for the command.
    Installed before the App starts (a SIGHUP would end the process otherwise); a reload
    asked for meanwhile waits until the returned event is set."""
    loop = asyncio.get_running_loop()
    started = asyncio.Event()
    tasks: set[asyncio.Task[None]] = set()
    seq = 0

    async def once() -> None:
        nonlocal seq
        await started.wait()
        try:
            report = await reload()
        except Exception as exc:  # a bug: said, and the command is not left waiting
            log.exception("reload failed")
            report = ReloadReport(
                ok=False, errors=f"reload failed ({type(exc).__name__}); see the log"
            )
        seq += 1
        write_verdict(database, seq, report, source)

    def hup() -> None:
        task = loop.create_task(once(), name="reload")
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    loop.add_signal_handler(signal.SIGHUP, hup)
    return started
