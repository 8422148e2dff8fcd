"""Hooks refused at the door: each counted by its reason, shown on `/metrics` as
`switchboard_hooks_refused_total{reason}` (a fixed set of reasons: never a label a client
chooses, such as the path), and logged at most once a minute per client and reason, with the
number of refusals not logged since: a flood of bad requests is a counter and a few lines, not
a log flood."""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from prometheus_client.core import CounterMetricFamily, Metric

log = logging.getLogger("adapters.hooks.door")

UNKNOWN_TRIGGER = "unknown_trigger"  # no such trigger, or a disabled one
BAD_SIGNATURE = "bad_signature"  # missing, malformed or wrong; a missing timestamp too
STALE_TIMESTAMP = "stale_timestamp"
TOO_LARGE = "too_large"
NOT_UTF8 = "not_utf8"
BAD_HEADER = "bad_header"  # a shown header of the wrong shape
REASONS = (UNKNOWN_TRIGGER, BAD_SIGNATURE, STALE_TIMESTAMP, TOO_LARGE, NOT_UTF8, BAD_HEADER)

LOG_EVERY_S = 60.0
MAX_CLIENTS = 1024  # clients remembered for the rate limit; past it, they share one line
OTHERS = "others"


@dataclass(slots=True)
class _Logged:
    at: float
    suppressed: int = 0


class Refusals:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self.counts: Counter[str] = Counter({reason: 0 for reason in REASONS})
        self._logged: dict[tuple[str, str], _Logged] = {}

    def refused(self, client: str, reason: str, fields: dict[str, object], level: int) -> None:
        """Count it; log it, unless this client's refusal for this reason was logged less
        than a minute ago (then it is counted into the next line's `suppressed`)."""
        self.counts[reason] += 1
        now = self._clock()
        key = self._key(client, reason, now)
        last = self._logged.get(key)
        if last is not None and now - last.at < LOG_EVERY_S:
            last.suppressed += 1
            return
        suppressed = last.suppressed if last is not None else 0
        self._logged[key] = _Logged(now)
        extra = {**fields, "client": key[0], "reason": reason, "suppressed": suppressed}
        log.log(level, "hook refused", extra=extra)

    def _key(self, client: str, reason: str, now: float) -> tuple[str, str]:
        key = (client, reason)
        if key in self._logged or len(self._logged) < MAX_CLIENTS:
            return key
        for old in [k for k, v in self._logged.items() if now - v.at >= LOG_EVERY_S]:
            if self._logged[old].suppressed == 0:  # nothing left to tell of it
                del self._logged[old]
        return key if len(self._logged) < MAX_CLIENTS else (OTHERS, reason)

    def collect(self) -> Iterator[Metric]:
        """Its counter, for a prometheus registry (a `Collector`)."""
        counter = CounterMetricFamily(
            "switchboard_hooks_refused",
            "Requests to POST /hooks/{workspace}/{trigger} refused at the door, by reason: "
            "unknown_trigger, bad_signature, stale_timestamp, too_large, not_utf8, bad_header.",
            labels=("reason",),
        )
        for reason in REASONS:
            counter.add_metric([reason], self.counts[reason])
        yield counter
