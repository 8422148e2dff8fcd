"""`[workspaces.wakeups]`: the limits on an agent's `schedule_wakeup` (issue 38). A session has
at most one wake-up pending (a later one replaces it); these bound how soon one may be set
for and how many a session may set in a day, so a model cannot wake itself without end."""

from __future__ import annotations

from pydantic import Field, field_validator

from config.strict import Strict
from config.timing import parse_duration

MIN_FLOOR_S = 1.0
MAX_FLOOR_S = 86_400.0


class WakeupsConfig(Strict):
    # The floor: a wake-up sooner than this is refused (the model is told the floor).
    min_delay: str = "10s"
    # Wake-ups a session may set in any 24 hours (a replaced one counts): past it, refused.
    per_day: int = Field(200, ge=1, le=100_000)

    @field_validator("min_delay")
    @classmethod
    def _a_floor(cls, value: str) -> str:
        seconds = parse_duration(value)
        if not MIN_FLOOR_S <= seconds <= MAX_FLOOR_S:
            raise ValueError(f"{value!r} is not between 1s and 1d")
        return value

    @property
    def min_delay_s(self) -> float:
        return parse_duration(self.min_delay)
