"""`switchboard reload`: the file is checked here first (as check-config does), then the
process running its database is told to reload (SIGHUP) and its verdict printed."""

from __future__ import annotations

import asyncio
from pathlib import Path

from adapters.server.reloading import WAIT_S, ask_for_reload, holder
from config.schema import SwitchboardConfig


def reload_command(path: Path, config: SwitchboardConfig) -> int:
    """0: the running process applied it; 1: it refused it, or none runs, or no answer."""
    database = config.storage.path
    pid = holder(database)
    if pid is None:
        print(f"switchboard: no Switchboard is running with {database}; nothing to reload.")
        return 1
    if pid == 0:
        print(f"switchboard: the process running {database} did not record its pid; restart it.")
        return 1
    try:
        verdict = asyncio.run(ask_for_reload(pid, database))
    except OSError as exc:  # another user's process, or another pid namespace
        print(f"switchboard: cannot signal process {pid} ({exc.strerror}); run this as its user.")
        return 1
    if verdict is None:
        print(f"switchboard: process {pid} gave no verdict within {WAIT_S:g} s; see its log.")
        return 1
    report = verdict.report
    if verdict.path and Path(verdict.path) != path.resolve():
        print(f"note: process {pid} reads its config from {verdict.path}, not {path}")
    if not report.ok:
        print(f"switchboard: process {pid} refused {path}; its running config stays:")
        print(report.errors)
        return 1
    print(f"{path}: reloaded by process {pid}")
    print("\n".join(report.lines()))
    return 0 if not report.errors else 1
