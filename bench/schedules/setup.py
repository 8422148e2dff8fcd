"""One workspace with many schedules in the real App, on a SQLite file in a temporary folder:
the offline model (it answers at once), Telegram on a loopback fake taking webhooks (so an
idle process does not poll), every run silent (the clock is measured, not the outbox)."""

from __future__ import annotations

import io
import resource
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from adapters.server.app import App
from bridge.automation.schedules import Schedules
from config import load
from config.schema import SwitchboardConfig
from tests.config_file import workspace, write_config
from tests.fakes.telegram_api import FakeTelegram

WORKSPACE = "acme"
ALICE = {"id": "alice", "primary": True, "telegram_user_id": 1001}


def schedules(count: int, **timing: str) -> list[dict[str, Any]]:
    """`count` schedules of one timing (`every="60s"`, `cron="* * * * *"`), ids s00000..."""
    return [
        {"id": f"s{i:05d}", "agent": "assistant", "prompt": f"tick {i}", "deliver": "silent"}
        | timing
        for i in range(count)
    ]


def rss_mib() -> float:
    """The process's resident memory now (ru_maxrss is only its peak)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status: this benchmark needs Linux")


def cpu_s() -> float:
    """CPU seconds (user and system) this process has used."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


@dataclass
class Loaded:
    config: SwitchboardConfig
    db: Path
    load_s: float  # reading and validating the file, as `switchboard run` does


def write_and_load(folder: Path, items: list[dict[str, Any]], telegram: FakeTelegram) -> Loaded:
    """The config file with `items` as acme's schedules, loaded."""
    bot = {
        "bot_token": telegram.token,
        "api_base_url": telegram.base_url,
        "mode": "webhook",
        "webhook_secret": "bench-webhook-secret",
        "chats": [-100],
    }
    acme = {**workspace(WORKSPACE, [ALICE], telegram=bot), "schedules": items}
    folder.mkdir(parents=True, exist_ok=True)
    path = write_config(
        folder / "switchboard.toml",
        db=folder / "sb.db",
        public_url="https://bot.example.com",
        workspaces=[acme],
    )
    started = time.perf_counter()
    config = load(path)
    return Loaded(config, folder / "sb.db", time.perf_counter() - started)


@dataclass
class Started:
    app: App
    start_s: float  # App.start, all of it
    clock_start_s: float  # Schedules.start, within it


@contextmanager
def timing_clock_start() -> Iterator[list[float]]:
    """How long Schedules.start takes as App.start calls it (the product's code unchanged)."""
    original = Schedules.start
    took: list[float] = []

    async def start(self: Schedules) -> None:
        began = time.perf_counter()
        await original(self)
        took.append(time.perf_counter() - began)

    Schedules.start = start  # type: ignore[method-assign]
    try:
        yield took
    finally:
        Schedules.start = original  # type: ignore[method-assign]


@asynccontextmanager
async def running(loaded: Loaded) -> AsyncIterator[Started]:
    app = App(loaded.config, stdin=io.StringIO(), stdout=io.StringIO())
    with timing_clock_start() as took:
        began = time.perf_counter()
        await app.start()
        start_s = time.perf_counter() - began
    try:
        yield Started(app, start_s, took[0] if took else float("nan"))
    finally:
        await app.stop()
