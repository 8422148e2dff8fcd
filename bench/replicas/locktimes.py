"""The fleet's write lock timed inside a replica: `python -m bench.replicas.locktimes run
--config FILE` is `switchboard run` with `PostgresDatabase.begin` and `commit` wrapped. Per
write transaction it keeps the time `begin` took (a block of numbers reserved, one round
trip, no lock) and, for each commit that numbers ledger events (the only ones that take the
lock), the commit's whole round trip: the lock is taken in its tail and held to its end, so
this bounds the hold from above. SIGUSR1 forgets what was kept (the end of a warm-up);
SIGUSR2 writes what was kept since to the file named by `$SB_LOCK_TIMES` as JSON."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

ENV = "SB_LOCK_TIMES"
SKIPPED = ("/runtime/store/", "/bridge/store/", "/contextlib.py", "locktimes.py")


@dataclass
class LockTimes:
    """What one replica's write transactions waited for the lock and held it, in ms."""

    waits: list[float]  # each write transaction's `begin`
    holds: list[float]  # each commit that took the lock (the lock held within it)
    callers: Counter[str]  # who began the transactions: the first frame outside the store

    @classmethod
    def read(cls, path: Path) -> LockTimes:
        kept = json.loads(path.read_text())
        return cls(
            [ns / 1e6 for ns in kept["waits"]],
            [ns / 1e6 for ns in kept["holds"]],
            Counter(kept["callers"]),
        )

    def pct(self, values: list[float], p: float) -> float:
        ordered = sorted(values)
        if not ordered:
            return 0.0
        return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered)) - 1))]

    def describe(self) -> str:
        if not self.waits:
            return "no write transactions"
        hold, wait = self.holds or [0.0], self.waits
        return (
            f"{len(wait):,} write transactions, {len(self.holds):,} of them taking the lock; "
            f"their commit (the lock held within it) p50 {self.pct(hold, 50):.2f} ms, "
            f"p90 {self.pct(hold, 90):.2f} ms, p99 {self.pct(hold, 99):.2f} ms, mean "
            f"{sum(hold) / len(hold):.2f} ms, {sum(hold) / 1000:.2f} s in all; `begin` (a "
            f"block of numbers, one round trip) p50 {self.pct(wait, 50):.2f} ms, p99 "
            f"{self.pct(wait, 99):.2f} ms, mean {sum(wait) / len(wait):.2f} ms"
        )


def _caller() -> str:
    """`module.py:function` of the first frame outside the stores, contextlib and this
    file."""
    frame = sys._getframe(2)
    while frame is not None:
        path = frame.f_code.co_filename
        if not any(p in path for p in SKIPPED):
            where = "/".join(Path(path).parts[-2:])
            return f"{where}:{frame.f_code.co_name}"
        frame = frame.f_back  # type: ignore[assignment]
    return "?"


def _install(out: Path) -> None:
    from runtime.store.postgres import PostgresDatabase

    waits: list[int] = []
    holds: list[int] = []
    callers: Counter[str] = Counter()

    original_begin = PostgresDatabase.begin
    original_commit = PostgresDatabase.commit

    async def begin(self: PostgresDatabase) -> Any:
        callers[_caller()] += 1
        started = time.perf_counter_ns()
        result = await original_begin(self)
        waits.append(time.perf_counter_ns() - started)
        return result

    async def commit(self: PostgresDatabase, statements: Any, events: Any, hint: bool) -> Any:
        started = time.perf_counter_ns()
        try:
            return await original_commit(self, statements, events, hint)
        finally:
            if events:
                holds.append(time.perf_counter_ns() - started)

    def forget(_signum: int, _frame: FrameType | None) -> None:
        waits.clear()
        holds.clear()
        callers.clear()

    def dump(_signum: int, _frame: FrameType | None) -> None:
        part = out.with_suffix(".part")
        part.write_text(json.dumps({"waits": waits, "holds": holds, "callers": callers}))
        part.replace(out)

    PostgresDatabase.begin = begin  # type: ignore[method-assign]
    PostgresDatabase.commit = commit  # type: ignore[method-assign]
    signal.signal(signal.SIGUSR1, forget)
    signal.signal(signal.SIGUSR2, dump)


def main() -> int:
    from adapters.server.cli import main as switchboard

    _install(Path(os.environ[ENV]))
    return switchboard(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
