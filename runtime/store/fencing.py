"""The leases a task's writes are fenced by, besides the store's own (`Store.fence_with`):
a session's lease, for the worker running its turns and for what is admitted to it
(`runtime/homes.py`); a workspace's, for its platform side (`bridge/placement.py`). They
nest: a message a workspace's replay admits to a session held here is fenced by both. Every
transaction begun in the task carries their checks (`Writer.fenced`): once another replica
holds one of them, the write is refused whole."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from runtime.records import Lease

FENCE: ContextVar[tuple[Lease, ...]] = ContextVar("switchboard_fence", default=())


@contextmanager
def fenced_by(lease: Lease | None) -> Iterator[None]:
    """Within it, this task's writes are fenced by `lease` too (a task started within it
    inherits them; one doing other work is started in a context of its own)."""
    fences = FENCE.get()
    token = FENCE.set(fences if lease is None or lease in fences else (*fences, lease))
    try:
        yield
    finally:
        FENCE.reset(token)
