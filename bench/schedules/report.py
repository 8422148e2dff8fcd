"""The tables `bench/schedules_bench.py` prints (markdown, for docs/benchmarks.md)."""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass

from bench.schedules.fires import Fires


@dataclass
class Firing:
    label: str
    fires: Fires
    load_s: float  # the config read and validated
    clock_start_s: float  # Schedules.start, each schedule seen first
    cpu_per_min: float  # s of CPU a minute while firing (the turns they start included)


@dataclass
class Idle:
    count: int
    rss_without: float  # MiB, the App running without them
    rss_loaded: float  # MiB, their config loaded too
    rss_started: float  # MiB, the App running with them
    load_s: float
    start_s: float  # App.start, all of it
    clock_start_s: float  # Schedules.start, each schedule seen first
    clock_restart_s: float  # Schedules.start on a restart
    cpu_per_min: float
    seconds: float
    listing_s: float  # what /schedules shows, read (Automations.schedules)


def print_report(
    idle: Idle | None,
    without: tuple[float, float] | None,
    firings: list[Firing],
    command: list[str],
) -> None:
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"\nMachine: {os.cpu_count()} cores, Python {platform.python_version()} "
        f"({platform.machine()}), load average at the end {load} (1 / 5 / 15 min); "
        f"command: `{' '.join(command)}`"
    )
    if firings:
        _print_firings(firings)
    if idle is not None:
        _print_idle(idle, without)


def _print_firings(firings: list[Firing]) -> None:
    print(
        f"\n| {firings[0].fires.schedules:,} schedules firing (silent runs, offline model) "
        "| due | stored | skipped / folded / not run | doubled | error p50 | p99 | max "
        "| CPU s a minute |"
    )
    print("|---|--:|--:|---|--:|--:|--:|--:|--:|")
    for r in firings:
        f = r.fires
        p50, p99, top = (f.pct(50), f.pct(99), f.errors_s[-1]) if f.errors_s else (0, 0, 0)
        print(
            f"| {r.label} ({f.due // max(1, f.schedules):,} slots) | {f.due:,} | {f.stored:,} "
            f"| {f.skipped:,} / {f.folded:,} / {f.unrun:,} | {f.doubled:,} | {p50:.2f} s "
            f"| {p99:.2f} s | {top:.2f} s | {r.cpu_per_min:.1f} |"
        )
    print()
    for r in firings:
        print(
            f"- {r.label}: config read and validated in {r.load_s:.1f} s, "
            f"Schedules.start {r.clock_start_s * 1000:,.0f} ms"
        )


def _print_idle(i: Idle, without: tuple[float, float] | None) -> None:
    grew = i.rss_started - i.rss_without
    baseline = (
        f"{without[0]:.3f} s (over {without[1]:.0f} s)" if without else "not measured (--only)"
    )
    print(
        f'\n| {i.count:,} idle schedules (`cron = "0 3 1 1 *"`) | result |\n|---|--:|\n'
        f"| RSS: App without them / their config loaded / App running them | "
        f"{i.rss_without:.0f} / {i.rss_loaded:.0f} / {i.rss_started:.0f} MiB |\n"
        f"| memory per idle schedule (RSS growth / count) | {grew * 1024 / i.count:.1f} KiB |\n"
        f"| CPU a minute with them (over {i.seconds:.0f} s) | {i.cpu_per_min:.3f} s |\n"
        f"| CPU a minute without them | {baseline} |\n"
        f"| config read and validated | {i.load_s:.1f} s |\n"
        f"| App.start with them | {i.start_s:.2f} s |\n"
        f"| Schedules.start: first (each seen first) / on a restart | "
        f"{i.clock_start_s * 1000:,.0f} ms / {i.clock_restart_s * 1000:,.0f} ms |\n"
        f"| /schedules: every schedule's view read (Automations.schedules) | "
        f"{i.listing_s:.2f} s |"
    )
