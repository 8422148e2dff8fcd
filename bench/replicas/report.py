"""The tables the benchmark prints."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from bench.replicas.bare import (
    Intake,
)
from bench.replicas.failover import Round
from bench.replicas.interjections import (
    COMMAND_S,
    Latencies,
)
from bench.replicas.spread_failover import Sample, SpreadOutcome
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
    print(
        "\nconnections the replicas opened during the load (pools grown past the warm-up's): "
        + ", ".join(f"{r.label} {r.opened}" for r in results)
    )
    pg = [r for r in results if r.lock is not None]
    one = next((r for r in pg if r.replicas == 1), None)
    for r in pg:
        if one is not None and r is not one:
            print(
                f"| {r.replicas} replicas / one replica | {r.acks_per_s / one.acks_per_s:.2f}x "
                f"| {r.turns_per_s / one.turns_per_s:.2f}x | | | |"
            )
    for r in results:  # SQLite's too: `--replicas '' --profile F`
        if r.profile is not None:
            print(f"\n{r.label}: the active replica's CPU by area (py-spy)\n")
            print(r.profile.table(r.per_turn_ms("active"), r.cpu["active"]))
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


def print_spread_failover(o: SpreadOutcome) -> None:
    """Part 5: kill to each of the killed replica's sessions' next answer, against the goal
    (under the lease's time plus 2 s), where that time goes, and the survivors' sessions
    beside them."""
    goal = o.ttl_s + 2.0

    def row(name: str, values: list[float], *, against_goal: bool = True) -> str:
        if not values:
            return f"| {name} | 0 | | | | | |"
        over = sum(1 for v in values if v > goal)
        verdict = f"{over} ({100 * over / len(values):.1f}%)" if against_goal else ""
        return (
            f"| {name} | {len(values)} | {pct(values, 50):.2f} s | {pct(values, 90):.2f} s "
            f"| {pct(values, 99):.2f} s | {max(values):.2f} s | {verdict} |"
        )

    print(
        f"\n| spread failover: SIGKILL of one of {o.replicas} replicas, {o.sessions} sessions "
        f"(lease_ttl_s {o.ttl_s:g}; goal p99 under {goal:g} s) | sessions | p50 | p90 | p99 "
        f"| max | over {goal:g} s |"
    )
    print("|---|--:|--:|--:|--:|--:|--:|")
    for active in (False, True):
        rounds = [r for r in o.rounds if r.active == active]
        if not rounds:
            continue
        which = "the active replica" if active else "a replica not the active one"
        samples = [s for r in rounds for s in r.samples]
        killed = [s for s in samples if s.killed]
        print(row(f"{len(rounds)} x {which}: kill to the next answer", _answer(killed)))
        for kind, what in KINDS.items():
            print(row(f"- {kind} ({what})", _answer([s for s in killed if s.kind == kind])))
        for name, hop in HOPS:
            print(row(f"- {name}", _values(killed, hop), against_goal=False))
        if active:
            taken = [r.active_s for r in rounds if r.active_s is not None]
            print(
                row("- kill to the `active` lease taken (once a round)", taken, against_goal=False)
            )
        print(
            row(
                "survivors' sessions, same rounds: kill to the answer",
                _answer([s for s in samples if not s.killed]),
                against_goal=False,
            )
        )
    every = [s for r in o.rounds for s in r.samples if s.killed]
    print(row("every round: the killed replica's sessions, kill to next answer", _answer(every)))
    per_round = [sum(1 for s in r.samples if s.killed) for r in o.rounds]
    missing = sum(len(r.missing) for r in o.rounds)
    print(
        f"\nsessions the killed replica held, a round: min {min(per_round, default=0)}, median "
        f"{statistics.median(per_round) if per_round else 0:g}, max {max(per_round, default=0)}; "
        f"taken over by a survivor {o.took_over.get('survivor', 0)} times, by the restarted one "
        f"{o.took_over.get('restarted', 0)} times; restarted replica ready within "
        f"{statistics.median([r.restart_s for r in o.rounds]) if o.rounds else 0:.1f} s of the "
        f"kill (median, an upper bound)"
    )
    serving = [r for r in o.rounds if any(n.startswith("workspace:") for n in r.workspaces)]
    print(
        f"the killed replica served a workspace (held a `workspace:` lease) in {len(serving)} "
        f"of {len(o.rounds)} rounds"
    )
    cut = [s for s in every if s.kind == "cut off"]
    other = [s for r in o.rounds for s in r.samples if not (s.killed and s.kind == "cut off")]
    print(
        f"answers saying a turn went on after a restart, in the killed replica's cut-off sessions: "
        f"{sum(s.notices for s in cut)} "
        f"for {len(cut)} turns ({sum(1 for s in cut if s.notices == 0)} without, "
        f"{sum(1 for s in cut if s.notices > 1)} with more than one); elsewhere: "
        f"{sum(s.notices for s in other)}"
    )
    print(
        f"operator messages: {o.posted} posted, {o.lost} lost, {o.doubled} answered twice"
        + (f"; {missing} not answered within a round's limit" if missing else "")
    )


KINDS = {"cut off": "a turn under way at the kill", "waiting": "a message posted after the kill"}


def _hop(start: str | None, end: str) -> Callable[[Sample], float | None]:
    """A sample's time from `start` (None: the kill) to `end`, if it has both."""

    def hop(s: Sample) -> float | None:
        a = 0.0 if start is None else getattr(s, start)
        b = getattr(s, end)
        return None if a is None or b is None else float(b - a)

    return hop


# Where a killed replica's session's wait goes, hop by hop.
HOPS: list[tuple[str, Callable[[Sample], float | None]]] = [
    ("kill to its lease's expiry (as last renewed)", _hop(None, "expiry_s")),
    ("expiry to its lease taken by another replica", _hop("expiry_s", "claimed_s")),
    ("lease taken to the model asked (again)", _hop("claimed_s", "asked_s")),
    ("model asked to the answer at the fake Slack", _hop("asked_s", "answer_s")),
]


def _values(samples: list[Sample], hop: Callable[[Sample], float | None]) -> list[float]:
    return [v for v in map(hop, samples) if v is not None]


def _answer(samples: list[Sample]) -> list[float]:
    return [s.answer_s for s in samples]


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
