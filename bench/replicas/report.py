"""The tables the benchmark prints."""

from __future__ import annotations

import statistics
from collections import Counter
from pathlib import Path

from bench.replicas.bare import (
    Intake,
)
from bench.replicas.failover import Round
from bench.replicas.interjections import (
    COMMAND_S,
    Latencies,
)
from bench.replicas.throughput import Throughput

# -- the report --------------------------------------------------------------------------


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered)) - 1))]


def print_throughput(results: list[Throughput], concurrency: int, spread: str) -> None:
    print(
        f"\n| throughput: {results[0].events:,} Slack events, {concurrency} in flight, "
        f"{spread} | events acked/s | turns done/s | CPU ms per turn, by process "
        "| CPU s during the load, by process | 429s |"
    )
    print("|---|--:|--:|---|---|--:|")
    for r in results:
        cpu = ", ".join(f"{name} {s:.1f}" for name, s in r.cpu.items())
        per_turn = ", ".join(
            f"{name} {r.per_turn_ms(name):.1f}" + (f" ({r.where[name]})" if name in r.where else "")
            for name in r.cpu
        )
        print(
            f"| {r.label} | {r.acks_per_s:,.0f} | {r.turns_per_s:,.1f} | {per_turn} "
            f"| {cpu} (over {r.wall_s:.1f} s) | {r.too_many} |"
        )
    pg = [r for r in results if r.lock is not None]
    one = next((r for r in pg if r.replicas == 1), None)
    for r in pg:
        if one is not None and r is not one:
            print(
                f"| {r.replicas} replicas / one replica | {r.acks_per_s / one.acks_per_s:.2f}x "
                f"| {r.turns_per_s / one.turns_per_s:.2f}x | | | |"
            )
    for r in pg:
        assert r.lock is not None
        print(f"\n{r.label}: the fleet's write lock (sampled) {r.lock.describe()}")
        for name, times in r.lock_times.items():
            print(f"- {name}, timed in the replica: {times.describe()}")
        writes = sum(len(t.waits) for t in r.lock_times.values())
        began: Counter[str] = sum((t.callers for t in r.lock_times.values()), Counter())
        print(
            "- write transactions per turn, by who began them: "
            + ", ".join(f"{who} {n / r.events:.2f}" for who, n in began.most_common(16))
        )
        if r.xacts is not None:
            print(
                f"- per turn: {writes / r.events:.2f} write transactions (the fleet's), "
                f"{r.xacts / r.events:.1f} transactions committed by PostgreSQL "
                "(pg_stat_database.xact_commit: reads in autocommit too)"
            )
        if r.profile is not None:
            print(f"\n{r.label}: the active replica's CPU by area (py-spy)\n")
            print(r.profile.table(r.per_turn_ms("active"), r.cpu["active"]))


def print_failover(
    rounds: list[Round], posted: int, lost: int, duplicated: int, ttl: float
) -> None:
    def row(name: str, values: list[float]) -> str:
        return (
            f"| {name} | {min(values):.2f} s | {statistics.median(values):.2f} s "
            f"| {max(values):.2f} s |"
        )

    print(
        f"\n| failover: {len(rounds)} x SIGKILL of the active replica (2 replicas, "
        f"lease_ttl_s {ttl:g}) | min | median | max |"
    )
    print("|---|--:|--:|--:|")
    print(row("kill to the lease taken by a survivor", [r.takeover_s for r in rounds]))
    print(row("kill to the first reply sent", [r.first_reply_s for r in rounds]))
    print(row("kill to every message of the round answered", [r.all_answered_s for r in rounds]))
    restarted = sum(1 for r in rounds if r.by_restarted)
    print(
        f"\noperator messages: {posted} posted, {lost} lost, {duplicated} answered twice; "
        f"the lease went to the old standby {len(rounds) - restarted} times, to the replica "
        f"restarted at the kill {restarted} times"
    )


def print_interjections(sleeping: Latencies, commanding: Latencies) -> None:
    print(
        "\n| operator message posted to the standby B, into a turn on the active replica A "
        "| messages | p50 | p99 | max |"
    )
    print("|---|--:|--:|--:|--:|")
    for where, result in (
        ("turn waiting in the `sleep` tool", sleeping),
        (f"turn running a {COMMAND_S:g} s command tool", commanding),
    ):
        for name, values in (
            ("B's 200 to stored on A (`message_queued`)", result.stored_ms),
            (
                "B's 200 to admitted into the turn (`operator_interjection_admitted`)",
                result.admitted_ms,
            ),
            ("B's 200 to the model's request carrying it", result.model_ms),
        ):
            if values:
                print(
                    f"| {where}: {name} | {len(values)} | {pct(values, 50):.1f} ms "
                    f"| {pct(values, 99):.1f} ms | {max(values):.1f} ms |"
                )


def print_overhead(results: dict[str, tuple[Intake, Intake]], count: int, clients: int) -> None:
    print(
        f"\n| intake, {count:,} requests a run, {clients} clients, each server its own process "
        "(medians) | bare library | Switchboard | Switchboard / bare |"
    )
    print("|---|--:|--:|--:|")
    names = {
        "slack": "Slack: slack-bolt's aiohttp server vs `/slack/events`",
        "telegram": "Telegram: python-telegram-bot `process_update` vs `/telegram/{workspace}`",
    }
    for platform, (bare, ours) in results.items():
        print(
            f"| {names[platform]} | {bare.rate:,.0f}/s ({bare.cpu:.2f} ms CPU each) "
            f"| {ours.rate:,.0f}/s ({ours.cpu:.2f} ms CPU each) | {ours.rate / bare.rate:.2f}x |"
        )


def loadavg() -> str:
    """The machine's one-minute load average: other work on it shows here."""
    return Path("/proc/loadavg").read_text().split()[0]
