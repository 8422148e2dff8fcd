"""A progress call (an edit, a stream, a typing indicator) made within the bridge's budget
for its kind: made only if the budget has room now, and when the platform says wait (its own
"too many requests"), the budget backs off as long as it asked and the call is skipped: the
bridge shows the update again later. Each platform says which of its errors asks to wait."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from bridge.transport import Budget, Call

T = TypeVar("T")

AskedToWait = Callable[[Exception], float | None]
"""How many seconds the platform asked to wait, when the error is its "too many requests";
None when it is any other error (raised on)."""


async def within(
    budget: Budget, call: Call, request: Callable[[], Awaitable[T]], waits: AskedToWait
) -> T | None:
    """The call's result; None when the budget had no room, or the platform said wait."""
    if not budget.take(call):
        return None
    try:
        return await request()
    except Exception as exc:
        seconds = waits(exc)
        if seconds is None:
            raise
        budget.back_off(call, seconds)
        return None
