"""When a schedule fires: its slots (cron, every, at) in its timezone, inside its active hours,
and the small stable jitter that spreads schedules of the same minute. Pure: the clock is an
argument, so the timing is tested across DST changes without waiting for one.

A slot is the nominal time (09:00:00 for `0 9 * * *`); it names a fire durably, so a restart
neither loses nor repeats one. The fire happens at the slot plus the jitter."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cronsim import CronSim, CronSimError

_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)", re.IGNORECASE)
_UNIT_S = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86_400.0, "w": 604_800.0}
_HOURS = re.compile(r"^(\d{1,2}):(\d{2})-(\d{1,2}):(\d{2})$")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MAX_JITTER_S = 10.0
SEARCH_LIMIT = 20_000  # slots looked at before a schedule is said never to fire again


def parse_duration(text: str) -> float:
    """Seconds in "90s", "15m", "2h", "1d", "1h30m" (units ms, s, m, h, d, w)."""
    cleaned = text.strip()
    parts = _DURATION.findall(cleaned)
    if not parts or _DURATION.sub("", cleaned).strip():
        raise ValueError(f"{text!r} is not a duration; write a number and a unit: 90s, 15m, 2h, 1d")
    return sum(float(n) * _UNIT_S[unit.lower()] for n, unit in parts)


def zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(
            f"unknown timezone {name!r}; use an IANA name such as UTC or Europe/Berlin"
        ) from None


def check_cron(expression: str) -> str:
    try:
        CronSim(expression, datetime(2026, 1, 1, tzinfo=UTC))
    except CronSimError as exc:
        raise ValueError(
            f"cron {expression!r} is not valid ({exc}); five fields: minute hour "
            "day-of-month month day-of-week, e.g. '0 9 * * 1-5'"
        ) from None
    return expression


@dataclass(frozen=True, slots=True)
class ActiveHours:
    """A daily window in the schedule's timezone; it may wrap midnight (22:00-06:00)."""

    start: time
    end: time

    @classmethod
    def parse(cls, text: str) -> ActiveHours:
        match = _HOURS.match(text.strip())
        if match is None:
            raise ValueError(f"active_hours {text!r} must read HH:MM-HH:MM, e.g. 08:00-20:00")
        h1, m1, h2, m2 = (int(g) for g in match.groups())
        if h1 > 24 or h2 > 24 or m1 > 59 or m2 > 59:
            raise ValueError(f"active_hours {text!r} has a time that does not exist")
        start, end = time(h1 % 24, m1), time(h2 % 24, m2) if h2 < 24 else time(0, 0)
        if start == end:
            raise ValueError(f"active_hours {text!r} is empty; leave it out to run at any hour")
        return cls(start, end)

    def contains(self, moment: datetime) -> bool:
        now = moment.time().replace(tzinfo=None)
        if self.start < self.end:
            return self.start <= now < self.end
        return now >= self.start or now < self.end


@dataclass(frozen=True, slots=True)
class Timing:
    """One of `cron`, `every_s` or `at`, in `tz`, inside `active` if given."""

    tz: ZoneInfo
    cron: str | None = None
    every_s: float | None = None
    at: datetime | None = None
    active: ActiveHours | None = None
    jitter_s: float = 0.0

    def next_after(self, after: datetime) -> datetime | None:
        """The first slot strictly after `after`, inside the active hours; None: none ever
        again (an `at` that passed, a cron whose dates never come inside the hours)."""
        if self.cron is not None:  # one iterator: a cron's slots come cheaply in a row
            slots = CronSim(self.cron, after.astimezone(self.tz).replace(microsecond=0))
            return self._first_active(slots)
        candidate = self._raw_after(after)
        for _ in range(SEARCH_LIMIT):
            if candidate is None or self.active is None or self.active.contains(candidate):
                return candidate
            candidate = self._raw_after(candidate)
        return None

    def _first_active(self, slots: CronSim) -> datetime | None:
        for _, slot in zip(range(SEARCH_LIMIT), slots, strict=False):
            if self.active is None or self.active.contains(slot):
                return slot
        return None

    def upcoming(self, after: datetime, count: int) -> list[datetime]:
        slots: list[datetime] = []
        slot: datetime | None = after
        while len(slots) < count and slot is not None:
            slot = self.next_after(slot)
            if slot is not None:
                slots.append(slot)
        return slots

    def missed(self, last: datetime, now: datetime, cap: int = 1000) -> tuple[datetime | None, int]:
        """The newest slot after `last` and at or before `now`, and how many there were (at
        most `cap`): fires missed while nothing ran, to run once."""
        newest: datetime | None = None
        count = 0
        slot = self.next_after(last)
        while slot is not None and slot <= now:
            newest, count = slot, count + 1
            if count >= cap:  # a cron can be counted only slot by slot; enough to say "many"
                later = self._latest_before(now)
                return (later if later is not None and later > slot else slot), count
            slot = self.next_after(slot)
        return newest, count

    def _latest_before(self, now: datetime) -> datetime | None:
        if self.every_s is None:
            return None
        return self._every_slot(now, ceil=False)

    def _raw_after(self, after: datetime) -> datetime | None:
        if self.every_s is not None:
            return self._every_slot(after, ceil=True)
        assert self.at is not None
        return self.at if self.at > after else None

    def _every_slot(self, moment: datetime, *, ceil: bool) -> datetime:
        """Slots of `every` are whole multiples of it since 1970 (UTC): the same on every
        replica and after every restart, with nothing stored."""
        assert self.every_s is not None
        step = self.every_s
        elapsed = (moment - _EPOCH).total_seconds()
        n = int(elapsed // step) + 1 if ceil else int(elapsed // step)
        return (_EPOCH + timedelta(seconds=n * step)).astimezone(self.tz)


def jitter_for(key: str, period_s: float | None) -> float:
    """A stable delay in [0, 10 s) (at most a tenth of the period) from the schedule's key:
    schedules of the same minute fire spread out, each at the same offset every time."""
    limit = MAX_JITTER_S if period_s is None else min(MAX_JITTER_S, period_s / 10)
    digest = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big")
    return round((digest / 2**64) * limit, 3)
