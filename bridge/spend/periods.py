"""A budget's period, a day or a month, as it is in the workspace's timezone (a day of a
daylight-saving change is 23 or 25 hours long)."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo


def day_start(day: date, tz: ZoneInfo) -> float:
    return datetime.combine(day, time(), tzinfo=tz).timestamp()


def period_bounds(period: str, tz: ZoneInfo, now: float) -> tuple[float, float]:
    """[start, end) of the `period` ("day" or "month") that holds wall time `now`."""
    today = datetime.fromtimestamp(now, tz).date()
    if period == "day":
        return day_start(today, tz), day_start(today + timedelta(days=1), tz)
    first = today.replace(day=1)
    following = (first + timedelta(days=32)).replace(day=1)
    return day_start(first, tz), day_start(following, tz)


def last_days(tz: ZoneInfo, now: float, count: int) -> list[tuple[date, float, float]]:
    """The last `count` days up to today, oldest first, each with its [start, end)."""
    today = datetime.fromtimestamp(now, tz).date()
    days = [today - timedelta(days=n) for n in range(count - 1, -1, -1)]
    return [(d, day_start(d, tz), day_start(d + timedelta(days=1), tz)) for d in days]
