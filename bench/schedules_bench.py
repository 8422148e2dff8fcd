"""Issue 31: the schedules' clock with 10,000 schedules in one workspace, in the real App on a
SQLite file in a temporary folder (the offline model answers at once; every run is silent, so
the clock and the turns it starts are measured, not a model or the outbox).

1. Firing: 10,000 schedules `every = "60s"`, then 10,000 `cron = "* * * * *"`, their jitter
   spreading them over the first seconds of each minute (up to 6 s for every 60 s, 10 s for
   a cron). Three slots (two minutes of fires): each fire's error, the moment its message was
   stored (the ledger's message_queued event) minus its due time (its slot plus its jitter);
   and whether every due slot ran once (automation_runs per schedule and slot, messages per
   slot). A slot not run `--drain` seconds after the last one was due is counted "not run".
2. Idle: 10,000 schedules that do not fire (`cron = "0 3 1 1 *"`): the process's RSS with
   the App running without them, with their config loaded, and with the App running them;
   its CPU seconds a minute (getrusage) against the App without them; how long the clock's
   start (Schedules.start) takes, first (each one seen first) and on a restart; and how long
   reading what /schedules shows (every schedule's view, with its next fire) takes.

    .venv/bin/python -m bench.schedules_bench [--schedules 10000] [--slots 3] [--idle 120]
        [--only idle|fire] [--profile PREFIX]

`--profile` samples the fires with py-spy into PREFIX-every.txt and PREFIX-cron.txt
(collapsed stacks, for a flame graph)."""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from bench.loopback import serve
from bench.schedules.fires import read, settled, slots_after
from bench.schedules.report import Firing, Idle, print_report
from bench.schedules.setup import (
    WORKSPACE,
    Loaded,
    cpu_s,
    rss_mib,
    running,
    schedules,
    write_and_load,
)
from config.timing import MAX_JITTER_S  # the latest a fire is due after its slot
from tests.fakes.telegram_api import FakeTelegram

PREPARE_S = 15.0  # 10,000 schedules loaded and the App started, with room to spare
RESTART_S = 8.0  # the idle App stopped, started again (the clock's restart) and stopped
MIN_BASELINE_S = 10.0
FIRINGS = (('every = "60s"', "every", "60s"), ('cron = "* * * * *"', "cron", "* * * * *"))


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.schedules_bench", description=__doc__)
    parser.add_argument("--schedules", type=int, default=10_000, help="in the one workspace")
    parser.add_argument("--slots", type=int, default=3, help="slots (minutes) of fires measured")
    parser.add_argument("--drain", type=float, default=10.0, help="s to wait for late fires")
    parser.add_argument("--idle", type=float, default=120.0, help="s of idle measurement, least")
    parser.add_argument("--only", choices=["idle", "fire"], help="one half only")
    parser.add_argument("--profile", type=Path, help="sample the fires with py-spy: PREFIX")
    return parser.parse_args(argv)


def say(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def ready_before_slot(after: float) -> float:
    """When to start preparing so the App is up a few seconds before a slot, from `after`."""
    return slots_after(after + PREPARE_S, 1)[0] - PREPARE_S


async def pause_until(moment: float) -> None:
    await asyncio.sleep(max(0.0, moment - time.time()))


async def rss_without(folder: Path, telegram: FakeTelegram) -> float:
    """The process's RSS with the App running and no schedules."""
    async with running(write_and_load(folder, [], telegram)):
        gc.collect()
        return rss_mib()


async def idle(folder: Path, telegram: FakeTelegram, args: argparse.Namespace) -> Idle:
    """Schedules that do not fire: memory, CPU a minute (measured at least `args.idle` s,
    and on until the firing half can start just before a slot), the clock's start."""
    rss_before = await rss_without(folder / "none", telegram)
    items = schedules(args.schedules, cron="0 3 1 1 *")
    loaded = write_and_load(folder / "idle", items, telegram)
    gc.collect()
    rss_loaded = rss_mib()
    async with running(loaded) as started:
        gc.collect()
        rss_started = rss_mib()
        listed = time.perf_counter()
        await started.app.bridge.automations.schedules(WORKSPACE)  # what /schedules reads
        listing_s = time.perf_counter() - listed
        say(f"idle: {args.schedules:,} schedules, measuring CPU for {args.idle:.0f} s or more")
        began, cpu = time.time(), cpu_s()
        await pause_until(ready_before_slot(began + args.idle + RESTART_S) - RESTART_S)
        used, seconds = cpu_s() - cpu, time.time() - began
    async with running(loaded) as again:
        pass
    return Idle(
        args.schedules, rss_before, rss_loaded, rss_started, loaded.load_s, started.start_s,
        started.clock_start_s, again.clock_start_s, used / seconds * 60, seconds, listing_s,
    )  # fmt: skip


async def baseline(folder: Path, telegram: FakeTelegram) -> tuple[float, float]:
    """CPU seconds a minute of the App with no schedules, measured until the next firing
    can start just before a slot (at least MIN_BASELINE_S); and over how long."""
    async with running(write_and_load(folder, [], telegram)):
        began, cpu = time.time(), cpu_s()
        await pause_until(ready_before_slot(began + MIN_BASELINE_S))
        seconds = time.time() - began
        return (cpu_s() - cpu) / seconds * 60, seconds


async def firing(loaded: Loaded, label: str, args: argparse.Namespace) -> Firing:
    """The schedules' first `args.slots` slots after the App started, fired and read back."""
    async with running(loaded) as started:
        due = slots_after(time.time(), args.slots)
        say(f"{label}: {args.schedules:,} schedules, {len(due)} slots from the next minute")
        await pause_until(due[0])
        began, cpu = time.time(), cpu_s()
        window_s = due[-1] + MAX_JITTER_S + args.drain - began
        spy = await sample(args.profile, label.split()[0], window_s) if args.profile else None
        await pause_until(due[-1] + MAX_JITTER_S)
        want = args.schedules * len(due)
        await settled(loaded.db, want, due, time.time() + args.drain)
        used, seconds = cpu_s() - cpu, time.time() - began
        if spy is not None:
            await spy.wait()
    fires = read(loaded.db, loaded.config, due)
    return Firing(label, fires, loaded.load_s, started.clock_start_s, used / seconds * 60)


async def sample(prefix: Path, name: str, seconds: float) -> asyncio.subprocess.Process:
    """py-spy sampling this process while it fires: collapsed stacks, idle included."""
    found = shutil.which("py-spy", path=str(Path(sys.executable).parent)) or "py-spy"
    argv = [os.environ.get("PY_SPY") or found, "record", "--format", "raw", "--idle"]
    argv += ["--nonblocking", "--rate", "100", "-d", str(max(1, round(seconds)))]
    return await asyncio.create_subprocess_exec(
        *argv, "-p", str(os.getpid()), "-o", f"{prefix}-{name}.txt",
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip


async def run(args: argparse.Namespace, telegram: FakeTelegram, folder: Path) -> None:
    idle_result = await idle(folder, telegram, args) if args.only != "fire" else None
    firings: list[Firing] = []
    without = None
    if args.only != "idle":
        for n, (label, key, value) in enumerate(FIRINGS):
            if n > 0:  # the App without schedules, while the next slot comes
                without = await baseline(folder / f"none-{n}", telegram)
            elif idle_result is None:
                await pause_until(ready_before_slot(time.time()))
            items = schedules(args.schedules, **{key: value})
            firings.append(await firing(write_and_load(folder / key, items, telegram), label, args))
    print_report(idle_result, without, firings, ["python -m bench.schedules_bench", *args.argv])


async def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    args = parse(argv)
    args.argv = argv
    telegram = FakeTelegram()
    runner, telegram.url = await serve(telegram.app())
    try:
        with tempfile.TemporaryDirectory(prefix="sb-schedules-") as tmp:
            await run(args, telegram, Path(tmp))
    finally:
        await runner.cleanup()


if __name__ == "__main__":
    asyncio.run(main())
