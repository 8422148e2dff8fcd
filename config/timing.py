"""When a schedule fires: its slots (cron, every, at) in its timezone, inside its active hours,
and the small stable jitter that spreads schedules of the same minute. Pure: the clock is an
argument, so the timing is tested across DST changes without waiting for one.

A slot is the nominal time (09:00:00 for `0 9 * * *`); it names a fire durably, so a restart
neither loses nor repeats one. The fire happens at the slot plus the jitter.

Instants are compared in UTC: two datetimes of one zone compare by their wall times (the
DST fold is ignored), so 02:30 before a fall-back would seem later than 02:10 after it."""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from itertools import islice
from typing import Annotated
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cronsim import CronSim, CronSimError
from pydantic import AfterValidator

_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)", re.IGNORECASE)
_UNIT_S = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86_400.0, "w": 604_800.0}
_HOURS = re.compile(r"^(\d{1,2}):(\d{2})-(\d{1,2}):(\d{2})$")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_US = timedelta(microseconds=1)
_SECOND = timedelta(seconds=1)
_DAY = timedelta(days=1)
MAX_JITTER_S = 10.0
# Slots outside the active hours in a row before a schedule is said never to fire again. A
# cron's search jumps a night at a time, and one that fires inside its hours at all misses at
# most about a year of days in a row (one that reaches them only on a DST change).
SEARCH_LIMIT = 20_000
CRON_SEARCH_LIMIT = 1_000


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


def check_zone(name: str) -> str:
    zone(name)
    return name


TimezoneName = Annotated[str, AfterValidator(check_zone)]
"""An IANA timezone name, checked when the config loads."""


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
    """A daily window in the schedule's timezone; it may wrap midnight (22:00-06:00). Its
    start and end are wall times: on a DST change the window is shorter or longer."""

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
        """Whether `moment`'s wall time (in the window's timezone) is inside."""
        now = moment.time()
        if self.start < self.end:
            return self.start <= now < self.end
        return now >= self.start or now < self.end

    def opens_not_before(self, outside: datetime) -> datetime:
        """For a moment outside the window: an instant no later than the window's next
        opening, so that a search may jump there and skip nothing."""
        day = outside.date() + (_DAY if outside.time() >= self.start else timedelta(0))
        return min(_readings(day, self.start, outside.tzinfo))

    def closed_not_after(self, outside: datetime) -> datetime:
        """For a moment outside the window: an instant no earlier than its last closing."""
        day = outside.date() - (timedelta(0) if outside.time() >= self.end else _DAY)
        return max(_readings(day, self.end, outside.tzinfo))


def _readings(day: date, wall: time, tz: tzinfo | None) -> tuple[datetime, datetime]:
    """The two instants a wall time may name on a day: the same but around a DST change,
    where it is skipped (the clock jumps over it) or repeated (the clock goes back)."""
    naive = datetime.combine(day, wall)
    return (
        naive.replace(tzinfo=tz, fold=0).astimezone(UTC),
        naive.replace(tzinfo=tz, fold=1).astimezone(UTC),
    )


def _utc(moment: datetime) -> datetime:
    return moment.astimezone(UTC)


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
        return next(self._slots_after(after), None)

    def upcoming(self, after: datetime, count: int) -> list[datetime]:
        return list(islice(self._slots_after(after), count))

    def missed(self, last: datetime, now: datetime, cap: int = 1000) -> tuple[datetime | None, int]:
        """The newest slot after `last` and at or before `now`, and how many there were (at
        most `cap`): fires missed while nothing ran, to run once."""
        newest: datetime | None = None
        count = 0
        for slot in self._slots_after(last):
            if _utc(slot) > _utc(now):
                break
            newest, count = slot, count + 1
            if count >= cap:  # counted far enough to say "many"; the newest is found backwards
                newest = self._newest_from(newest, now)
                break
        return newest, count

    def _newest_from(self, found: datetime, now: datetime) -> datetime:
        """The newest slot at or before `now`, `found` being one. Searched backwards from
        `now` in wall time, then forwards from there: on a fall-back day the hour repeated
        after `now`'s wall time may hold newer slots (02:56 CEST comes before 02:00 CET)."""
        back = self._newest_until(now)
        newest = back if back is not None and _utc(back) > _utc(found) else found
        for slot in self._slots_after(newest):
            if _utc(slot) > _utc(now):
                break
            newest = slot
        return newest

    def _inside(self, slot: datetime) -> bool:
        return self.active is None or self.active.contains(slot.astimezone(self.tz))

    def _slots_after(self, after: datetime) -> Iterator[datetime]:
        """The active slots strictly after `after`, in order, in the schedule's timezone."""
        if self.cron is not None:
            yield from self._cron_after(after)
        elif self.every_s is not None:
            yield from self._every_after(after)
        elif self.at is not None and _utc(self.at) > _utc(after) and self._inside(self.at):
            yield self.at.astimezone(self.tz)

    def _newest_until(self, now: datetime) -> datetime | None:
        """The newest active slot at or before `now` (a cron's or an every's)."""
        if self.cron is not None:
            return next(self._cron_until(now), None)
        if self.every_s is not None:
            return self._every_until(now)
        return None

    def _cron_after(self, after: datetime) -> Iterator[datetime]:
        """Outside the active hours the search starts again at the next opening, rather than
        walk there a slot at a time (a cron of seconds has 43,200 in a night)."""
        assert self.cron is not None
        floor, skipped = _utc(after), 0
        slots = _cron_slots(self.cron, after.astimezone(self.tz))
        while skipped < CRON_SEARCH_LIMIT and (slot := next(slots, None)) is not None:
            if _utc(slot) <= floor:  # cron reads wall times: a fall-back day repeats them
                continue
            floor = _utc(slot)
            if self._inside(slot):
                skipped = 0
                yield slot
                continue
            assert self.active is not None
            skipped += 1
            opening = self.active.opens_not_before(slot)
            if opening > floor:  # from one second before: cronsim gives what comes after
                slots = _cron_slots(self.cron, (opening - _SECOND).astimezone(self.tz))

    def _cron_until(self, now: datetime) -> Iterator[datetime]:
        """Backwards from `now` (included), as `_cron_after` goes forwards."""
        assert self.cron is not None
        ceiling, skipped = _utc(now) + _US, 0
        # Backwards cronsim gives the slots before its start: a microsecond on takes in `now`.
        slots = _cron_slots(self.cron, ceiling.astimezone(self.tz), reverse=True)
        while skipped < CRON_SEARCH_LIMIT and (slot := next(slots, None)) is not None:
            if _utc(slot) >= ceiling:
                continue
            ceiling = _utc(slot)
            if self._inside(slot):
                skipped = 0
                yield slot
                continue
            assert self.active is not None
            skipped += 1
            closing = self.active.closed_not_after(slot)
            if closing < ceiling:
                slots = _cron_slots(self.cron, closing.astimezone(self.tz), reverse=True)

    def _every_after(self, after: datetime) -> Iterator[datetime]:
        """Slots of `every` are whole multiples of it since 1970 (UTC): the same on every
        replica and after every restart, with nothing stored. Outside the active hours the
        search jumps to the next opening rather than walk there a slot at a time."""
        step = self._step_us()
        n = _us_since_epoch(after) // step + 1
        skipped = 0
        while skipped < SEARCH_LIMIT:
            slot = self._every_slot(n, step)
            if self._inside(slot):
                skipped = 0
                yield slot
                n += 1
                continue
            assert self.active is not None
            skipped += 1
            opening = _us_since_epoch(self.active.opens_not_before(slot))
            n = max(n + 1, -(-opening // step))

    def _every_until(self, now: datetime) -> datetime | None:
        step = self._step_us()
        n = _us_since_epoch(now) // step
        for _ in range(SEARCH_LIMIT):
            slot = self._every_slot(n, step)
            if self._inside(slot):
                return slot
            assert self.active is not None
            closing = _us_since_epoch(self.active.closed_not_after(slot))
            n = min(n - 1, (closing - 1) // step)
        return None

    def _step_us(self) -> int:
        assert self.every_s is not None
        return max(1, round(self.every_s * 1_000_000))

    def _every_slot(self, n: int, step_us: int) -> datetime:
        return (_EPOCH + n * step_us * _US).astimezone(self.tz)


def _cron_slots(expression: str, start: datetime, *, reverse: bool = False) -> Iterator[datetime]:
    """A cron's slots from `start` until it has none: cronsim gives up after 50 years without
    one, and fails where the calendar ends, in the year 9999."""
    cron = CronSim(expression, start, reverse=reverse)
    while True:
        try:
            yield next(cron)
        except (StopIteration, OverflowError):
            return


def _us_since_epoch(moment: datetime) -> int:
    return (moment - _EPOCH) // _US


def jitter_for(key: str, period_s: float | None) -> float:
    """A stable delay in [0, 10 s) (under a tenth of the period) from the schedule's key:
    schedules of the same minute fire spread out, each at the same offset every time."""
    limit = MAX_JITTER_S if period_s is None else min(MAX_JITTER_S, period_s / 10)
    digest = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big")
    return math.floor((digest / 2**64) * limit * 1000) / 1000  # in ms, never up to the limit
