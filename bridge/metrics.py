"""Counters and a histogram, rendered in the Prometheus text format for GET /metrics."""

from __future__ import annotations

import bisect
from collections import defaultdict


def _labels(pairs: tuple[tuple[str, str], ...]) -> str:
    if not pairs:
        return ""
    body = ",".join(
        f'{k}="{v.replace(chr(92), chr(92) * 2).replace(chr(34), chr(92) + chr(34))}"'
        for k, v in pairs
    )
    return "{" + body + "}"


class Counter:
    def __init__(self, name: str, help_text: str) -> None:
        self.name = name
        self.help = help_text
        self.values: dict[tuple[tuple[str, str], ...], float] = defaultdict(float)

    def inc(self, amount: float = 1.0, **labels: str) -> None:
        self.values[tuple(sorted(labels.items()))] += amount

    def render(self) -> list[str]:
        lines = [f"# HELP {self.name} {self.help}", f"# TYPE {self.name} counter"]
        lines += [f"{self.name}{_labels(k)} {v:g}" for k, v in sorted(self.values.items())]
        return lines


class Histogram:
    BUCKETS = (0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600)

    def __init__(self, name: str, help_text: str) -> None:
        self.name = name
        self.help = help_text
        self.counts = [0] * (len(self.BUCKETS) + 1)
        self.total = 0.0

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(self.BUCKETS, value)] += 1
        self.total += value

    def render(self) -> list[str]:
        lines = [f"# HELP {self.name} {self.help}", f"# TYPE {self.name} histogram"]
        running = 0
        for bound, count in zip((*self.BUCKETS, float("inf")), self.counts, strict=True):
            running += count
            le = "+Inf" if bound == float("inf") else f"{bound:g}"
            lines.append(f'{self.name}_bucket{{le="{le}"}} {running}')
        lines += [f"{self.name}_sum {self.total:g}", f"{self.name}_count {running}"]
        return lines


class Metrics:
    def __init__(self) -> None:
        self.messages_in = Counter(
            "switchboard_messages_in_total", "Chat messages received, by workspace and trust."
        )
        self.interjections = Counter(
            "switchboard_interjections_total",
            "Operator messages admitted into running turns, by boundary.",
        )
        self.deliveries = Counter(
            "switchboard_deliveries_total", "Delivery intents that ended, by final status."
        )
        self.turn_seconds = Histogram(
            "switchboard_turn_duration_seconds", "Wall time of finished turns."
        )

    def render(self) -> str:
        parts: list[Counter | Histogram] = [
            self.messages_in,
            self.interjections,
            self.deliveries,
            self.turn_seconds,
        ]
        return "\n".join(line for p in parts for line in p.render()) + "\n"
