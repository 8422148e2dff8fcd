"""The lease a task's writes are fenced by, besides the store's own (`Store.fence_with`):
a session's lease, for the worker running its turns and for what is admitted to it
(`runtime/homes.py`). Every transaction begun in the task carries its check
(`Writer.fenced`): once another replica holds the lease, the write is refused whole."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from runtime.records import Lease

FENCE: ContextVar[Lease | None] = ContextVar("switchboard_fence", default=None)


@contextmanager
def fenced_by(lease: Lease | None) -> Iterator[None]:
    """Within it, this task's writes are fenced by `lease` too."""
    token = FENCE.set(lease)
    try:
        yield
    finally:
        FENCE.reset(token)
