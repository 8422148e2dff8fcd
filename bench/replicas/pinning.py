"""`--pin`: replica i on core i mod nproc (`taskset -c`), the benchmark's own process (fakes,
load generator) on the cores left, if any."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

ALL = sorted(os.sched_getaffinity(0))  # this process's cores before any pinning


def replica_cores(replicas: int) -> list[int]:
    return [ALL[i % len(ALL)] for i in range(replicas)]


def _set(cores: set[int]) -> None:
    """Every thread of this process (`sched_setaffinity` sets one thread's)."""
    for task in Path("/proc/self/task").iterdir():
        with contextlib.suppress(OSError):
            os.sched_setaffinity(int(task.name), cores)


@contextlib.contextmanager
def bench_pinned(replicas: int) -> Iterator[str]:
    """This process on the cores no replica has, while the block runs; where it ran."""
    left = set(ALL) - set(replica_cores(replicas))
    if not left:
        yield "unpinned"
        return
    _set(left)
    try:
        yield "core " + ",".join(map(str, sorted(left)))
    finally:
        _set(set(ALL))
