"""When to start the door process again after it failed (it exited, or did not start): after
1 s, then twice as long after each failure in a row, up to a minute; a process that stayed up
a minute ends the run of failures. After three in a row the operator is to be told, once for
that run (a log line a second, forever, told no one)."""

from __future__ import annotations

from dataclasses import dataclass

FIRST_S = 1.0
MAX_S = 60.0
STEADY_S = 60.0  # up this long, a process that then fails starts a new run of failures
TELL_AFTER = 3  # failures in a row before the operator is told


@dataclass
class Restarts:
    first_s: float = FIRST_S
    max_s: float = MAX_S
    steady_s: float = STEADY_S
    tell_after: int = TELL_AFTER
    in_a_row: int = 0
    told: bool = False

    def stayed_up(self, seconds: float) -> None:
        """The process that just ended was up `seconds`: long enough, the failures so far
        are forgotten."""
        if seconds >= self.steady_s:
            self.in_a_row, self.told = 0, False

    def failed(self) -> float:
        """One more failure in a row: how long to wait before the next start."""
        self.in_a_row += 1
        return min(self.first_s * 2.0 ** (self.in_a_row - 1), self.max_s)

    def tell_now(self) -> bool:
        """The operator is to be told now: `tell_after` failures in a row, not yet told."""
        if self.in_a_row < self.tell_after or self.told:
            return False
        self.told = True
        return True
