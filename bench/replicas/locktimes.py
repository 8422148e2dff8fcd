"""The fleet's write lock timed inside a replica: `python -m bench.replicas.locktimes run
--config FILE` is `switchboard run` with `PostgresDatabase.begin`, `commit` and `rollback`
wrapped. Per write transaction it keeps the wait (from `begin` called to `begin` returned: the
lock granted and the sequences read, one round trip) and the hold (from `begin` returned to
its commit or rollback returned: the lock is transaction-scoped). SIGUSR1 forgets what was
kept (the end of a warm-up); SIGUSR2 writes what was kept since to the file named by
`$SB_LOCK_TIMES` as JSON."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections import Counter
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

ENV = "SB_LOCK_TIMES"
SKIPPED = ("/runtime/store/", "/bridge/store/", "/contextlib.py", "locktimes.py")


@dataclass
class LockTimes:
    """What one replica's write transactions waited for the lock and held it, in ms."""

    waits: list[float]
    holds: list[float]
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
        if not self.holds:
            return "no write transactions"
        hold, wait = self.holds, self.waits
        return (
            f"{len(hold):,} write transactions; lock held p50 {self.pct(hold, 50):.2f} ms, "
            f"p90 {self.pct(hold, 90):.2f} ms, p99 {self.pct(hold, 99):.2f} ms, mean "
            f"{sum(hold) / len(hold):.2f} ms, {sum(hold) / 1000:.2f} s in all; `begin` (lock "
            f"and sequences, one round trip) p50 {self.pct(wait, 50):.2f} ms, p99 "
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
    granted: dict[int, int] = {}  # id(database) -> when its `begin` returned

    original_begin = PostgresDatabase.begin
    original_commit = PostgresDatabase.commit
    original_rollback = PostgresDatabase.rollback

    def ended(db: PostgresDatabase) -> None:
        at = granted.pop(id(db), None)
        if at is not None:
            holds.append(time.perf_counter_ns() - at)

    async def begin(self: PostgresDatabase) -> Any:
        callers[_caller()] += 1
        started = time.perf_counter_ns()
        result = await original_begin(self)
        granted[id(self)] = time.perf_counter_ns()
        waits.append(granted[id(self)] - started)
        return result

    def wrapped(original: Callable[..., Coroutine[Any, Any, None]]) -> Any:
        async def call(self: PostgresDatabase, *args: Any) -> None:
            try:
                await original(self, *args)
            finally:
                ended(self)

        return call

    def forget(_signum: int, _frame: FrameType | None) -> None:
        waits.clear()
        holds.clear()
        callers.clear()

    def dump(_signum: int, _frame: FrameType | None) -> None:
        part = out.with_suffix(".part")
        part.write_text(json.dumps({"waits": waits, "holds": holds, "callers": callers}))
        part.replace(out)

    PostgresDatabase.begin = begin  # type: ignore[method-assign]
    PostgresDatabase.commit = wrapped(original_commit)  # type: ignore[method-assign]
    PostgresDatabase.rollback = wrapped(original_rollback)  # type: ignore[method-assign]
    signal.signal(signal.SIGUSR1, forget)
    signal.signal(signal.SIGUSR2, dump)


def main() -> int:
    from adapters.server.cli import main as switchboard

    _install(Path(os.environ[ENV]))
    return switchboard(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
