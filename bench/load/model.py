"""The model's side of the load benchmark: it notes when each operator message ("message N")
first reached it, and answers each request at once or after a realistic 1-3 s (a stream's
first words at once, the rest after the wait), with a text naming the answer ("answer N")
so that finished turns can be counted where they are posted."""

from __future__ import annotations

import asyncio
import json
import random
import re
import time
from typing import Any

from tests.fakes.anthropic_api import Reply, text

MESSAGE = re.compile(r"message (\d+)\b")


class Watcher:
    def __init__(self, latency_s: tuple[float, float] | None = None) -> None:
        self.latency_s = latency_s
        self.seen: dict[int, float] = {}  # message number -> when the model first saw it
        self.answered = 0

    def __call__(self, body: dict[str, Any]) -> Reply:
        now = time.time()
        for message in body["messages"][-2:]:  # what is new in a request is at its end
            for number in MESSAGE.findall(json.dumps(message["content"])):
                self.seen.setdefault(int(number), now)
        self.answered += 1
        hold = None
        if self.latency_s is not None:
            hold = asyncio.Event()
            asyncio.get_running_loop().call_later(random.uniform(*self.latency_s), hold.set)
        return text(f"answer {self.answered}", hold=hold)

    def visible_ms(self, first: int, count: int, start: float, rate: float) -> list[float]:
        """Milliseconds from each message's due time to the model seeing it (those seen)."""
        due = {first + i: start + i / rate for i in range(count)}
        return sorted(1000 * (self.seen[n] - t) for n, t in due.items() if n in self.seen)


def percentile(values: list[float], share: float) -> float | None:
    if not values:
        return None
    return round(values[min(len(values) - 1, int(share * len(values)))], 1)
