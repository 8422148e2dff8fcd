"""Send pacing: a minimum interval per conversation and a global rate, on the injectable clock."""

from __future__ import annotations

from runtime.clock import Clock


class RateLimiter:
    def __init__(
        self, clock: Clock, per_conversation_interval_s: float, global_per_second: float
    ) -> None:
        self._clock = clock
        self._interval = per_conversation_interval_s
        self._global_gap = 1.0 / global_per_second if global_per_second > 0 else 0.0
        self._next_for: dict[str, float] = {}
        self._next_global = 0.0

    async def acquire(self, conversation_key: str) -> None:
        """Wait until one more message may go to this conversation: first its own turn, then
        a global slot taken only then, so one busy conversation never holds up the others."""
        now = self._clock.monotonic()
        at = max(now, self._next_for.get(conversation_key, 0.0))
        self._next_for[conversation_key] = at + self._interval
        if at > now:
            await self._clock.sleep(at - now)
        now = self._clock.monotonic()
        slot = max(now, self._next_global)
        self._next_global = slot + self._global_gap
        if slot > now:
            await self._clock.sleep(slot - now)

    def back_off(self, conversation_key: str, seconds: float) -> None:
        """The platform said wait (Retry-After): nothing more to it, or anywhere, until then."""
        until = self._clock.monotonic() + seconds
        self._next_for[conversation_key] = max(self._next_for.get(conversation_key, 0.0), until)
        self._next_global = max(self._next_global, until)
