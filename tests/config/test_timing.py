"""When a schedule fires (config/timing.py), with the clock an argument: cron across the DST
changes of Berlin and New York, every's slots since 1970, at, active hours (also across
midnight and DST), missed fires after a downtime, the jitter, and durations."""

from __future__ import annotations

import time as clock
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from config.timing import ActiveHours, Timing, jitter_for, parse_duration

BERLIN = ZoneInfo("Europe/Berlin")
NEW_YORK = ZoneInfo("America/New_York")
UTC_ZONE = ZoneInfo("UTC")
ZONES = [BERLIN, NEW_YORK, UTC_ZONE, ZoneInfo("Australia/Lord_Howe")]  # its DST is 30 minutes


def at(zone: ZoneInfo, *parts: int, fold: int = 0) -> datetime:
    """A wall time in `zone` (year, month, day, hour...); fold=1: its second reading, in
    the hour a fall-back repeats."""
    return datetime(*parts).replace(tzinfo=zone, fold=fold)


def local(slots: list[datetime]) -> list[str]:
    """Slots as a person reads them: wall time and offset."""
    return [s.strftime("%Y-%m-%d %H:%M:%S%z") for s in slots]


# The DST changes of 2026: (zone, spring-forward day, fall-back day, a time the fall-back repeats)
DST = [
    pytest.param(BERLIN, (2026, 3, 29), (2026, 10, 25), (2, 30), id="Europe/Berlin"),
    pytest.param(NEW_YORK, (2026, 3, 8), (2026, 11, 1), (1, 30), id="America/New_York"),
]


@pytest.mark.parametrize("zone,spring,fall,repeated", DST)
def test_a_daily_job_fires_once_on_each_dst_change(
    zone: ZoneInfo,
    spring: tuple[int, int, int],
    fall: tuple[int, int, int],
    repeated: tuple[int, int],
) -> None:
    daily_0230 = Timing(tz=zone, cron="30 2 * * *")
    day_before = at(zone, *spring) - timedelta(hours=12)
    # 02:30 does not exist on the spring-forward day: it fires at 03:00, as Debian cron does.
    assert [s.strftime("%d %H:%M") for s in daily_0230.upcoming(day_before, 3)] == [
        f"{spring[2]:02} 03:00",
        f"{spring[2] + 1:02} 02:30",
        f"{spring[2] + 2:02} 02:30",
    ]
    hour, minute = repeated
    daily = Timing(tz=zone, cron=f"{minute} {hour} * * *")
    first = at(zone, *fall, hour, minute)
    assert daily.upcoming(at(zone, *fall) - timedelta(hours=12), 2) == [first, first + timedelta(1)]
    # The repeated hour's second pass: its wall time comes again, the job does not.
    for moment in (
        first,
        at(zone, *fall, hour, minute - 5, fold=1),
        at(zone, *fall, hour, 59, fold=1),
    ):
        assert daily.next_after(moment) == at(zone, *fall, hour, minute) + timedelta(days=1)
    fires, after = [], at(zone, *fall) - timedelta(hours=1)
    while (slot := daily.next_after(after)) is not None and slot.date() == first.date():
        fires.append(slot)
        after = slot + timedelta(minutes=1)
    assert fires == [first]


def test_weekdays_at_nine_are_weekdays_at_nine_in_their_zone() -> None:
    weekdays = Timing(tz=BERLIN, cron="0 9 * * 1-5")
    friday_noon = at(BERLIN, 2026, 3, 27, 12)
    assert local(weekdays.upcoming(friday_noon, 6)) == [
        "2026-03-30 09:00:00+0200",  # Monday, after the weekend (and the DST change)
        "2026-03-31 09:00:00+0200",
        "2026-04-01 09:00:00+0200",
        "2026-04-02 09:00:00+0200",
        "2026-04-03 09:00:00+0200",
        "2026-04-06 09:00:00+0200",
    ]
    assert weekdays.next_after(at(BERLIN, 2026, 3, 30, 9)) == at(BERLIN, 2026, 3, 31, 9)


# Each fires inside each of the HOURS (never-firing ones are tested through the config).
CRONS = ["30 2 * * *", "*/15 * * * *", "0 * * * *", "5 3 * * 1-5", "*/7 2-3 * * *"]
CRONS += ["*/10 * * * * *"]  # six fields: every 10 seconds
EDGES = [datetime(2026, 3, 29, 1, tzinfo=UTC), datetime(2026, 10, 25, 1, tzinfo=UTC)]
EDGES += [datetime(2026, 3, 8, 7, tzinfo=UTC), datetime(2026, 11, 1, 6, tzinfo=UTC)]
EDGES += [datetime(2026, 4, 4, 15, tzinfo=UTC), datetime(2026, 10, 3, 15, tzinfo=UTC)]  # Lord Howe
HOURS = [None, "01:00-05:00", "22:00-06:00", "02:15-03:10"]
moments = st.builds(
    lambda edge, seconds, micro: edge + timedelta(seconds=seconds, microseconds=micro),
    st.sampled_from(EDGES),
    st.integers(-40 * 3600, 40 * 3600),
    st.sampled_from([0, 0, 1, 500_000, 999_999]),
)
timings = st.builds(
    lambda zone, how, hours: Timing(
        tz=zone,
        cron=how if isinstance(how, str) else None,
        every_s=how if isinstance(how, float) else None,
        active=ActiveHours.parse(hours) if hours else None,
    ),
    st.sampled_from(ZONES),
    st.one_of(st.sampled_from(CRONS), st.sampled_from([1.0, 5.0, 90.0, 900.0, 5400.0])),
    st.sampled_from(HOURS),
)


@settings(max_examples=300)
@given(timing=timings, after=moments)
def test_slots_come_strictly_after_in_order_inside_the_hours(
    timing: Timing, after: datetime
) -> None:
    slots = timing.upcoming(after, 5)
    assert slots, "each of these fires again"
    instants = [after] + [s.astimezone(UTC) for s in slots]
    assert instants == sorted(set(instants)), local(slots)
    assert all(s.tzinfo is timing.tz for s in slots)
    assert timing.active is None or all(timing.active.contains(s) for s in slots)
    assert timing.next_after(after) == slots[0]


@settings(max_examples=200)
@given(timing=timings, last=moments, span_s=st.integers(0, 6 * 3600), cap=st.integers(1, 8))
def test_missed_is_the_newest_slot_since_last_and_how_many(
    timing: Timing, last: datetime, span_s: int, cap: int
) -> None:
    now = last + timedelta(seconds=span_s)
    due = [s for s in timing.upcoming(last, cap + 1) if s.astimezone(UTC) <= now]
    newest, count = timing.missed(last.astimezone(timing.tz), now.astimezone(timing.tz), cap)
    assert count == min(len(due), cap)
    if len(due) <= cap:
        assert newest == (due[-1] if due else None)
    else:  # the newest is the last slot at or before now, however many came before it
        assert newest is not None and newest.astimezone(UTC) <= now
        following = timing.next_after(newest)
        assert following is None or following.astimezone(UTC) > now


def test_a_slot_missed_in_the_hour_a_fall_back_repeats_is_found() -> None:
    daily = Timing(tz=BERLIN, cron="30 2 * * *")
    last = at(BERLIN, 2026, 10, 24, 2, 30)
    # Restarted at 02:10 in the repeated hour (01:10 UTC): 02:30 CEST (00:30 UTC) was missed.
    assert daily.missed(last, at(BERLIN, 2026, 10, 25, 2, 10, fold=1)) == (
        at(BERLIN, 2026, 10, 25, 2, 30),
        1,
    )


def test_every_counts_from_1970_so_a_restart_finds_the_same_slots() -> None:
    quarter = Timing(tz=BERLIN, every_s=parse_duration("15m"))
    before, after_restart = at(BERLIN, 2026, 6, 1, 9, 1, 7), at(BERLIN, 2026, 6, 1, 9, 14, 59)
    assert (
        quarter.next_after(before)
        == quarter.next_after(after_restart)
        == at(BERLIN, 2026, 6, 1, 9, 15)
    )
    assert quarter.next_after(at(BERLIN, 2026, 6, 1, 9, 15)) == at(BERLIN, 2026, 6, 1, 9, 30)
    five = Timing(tz=UTC_ZONE, every_s=parse_duration("5s"))
    slots = five.upcoming(datetime(2026, 6, 1, 9, 0, 3, 250_000, tzinfo=UTC), 3)
    assert [s.strftime("%H:%M:%S.%f") for s in slots] == [
        "09:00:05.000000",
        "09:00:10.000000",
        "09:00:15.000000",
    ]
    ninety = Timing(tz=UTC_ZONE, every_s=90.0)
    assert all(
        s.timestamp() % 90 == 0 for s in ninety.upcoming(datetime(2026, 1, 1, tzinfo=UTC), 50)
    )


def test_a_one_second_every_inside_hours_waits_for_the_next_opening() -> None:
    day = Timing(tz=BERLIN, every_s=1.0, active=ActiveHours.parse("08:00-20:00"))
    assert day.next_after(at(BERLIN, 2026, 6, 1, 19, 59, 59)) == at(BERLIN, 2026, 6, 2, 8)
    seconds_cron = Timing(tz=BERLIN, cron="* * * * * *", active=ActiveHours.parse("08:00-20:00"))
    assert seconds_cron.next_after(at(BERLIN, 2026, 6, 1, 19, 59, 59)) == at(BERLIN, 2026, 6, 2, 8)
    night = Timing(tz=BERLIN, every_s=1.0, active=ActiveHours.parse("22:00-06:00"))
    assert night.next_after(at(BERLIN, 2026, 6, 1, 6)) == at(BERLIN, 2026, 6, 1, 22)
    assert night.next_after(at(BERLIN, 2026, 6, 1, 23, 59, 59)) == at(BERLIN, 2026, 6, 2, 0)
    # The window opens at 02:30, which the spring-forward day skips: it opens at 03:00 CEST.
    gap = Timing(tz=BERLIN, every_s=1.0, active=ActiveHours.parse("02:30-06:00"))
    assert local([gap.next_after(at(BERLIN, 2026, 3, 29, 0))]) == ["2026-03-29 03:00:00+0200"]  # type: ignore[list-item]


def test_active_hours_inside_a_day_and_across_midnight() -> None:
    office, night = ActiveHours.parse("08:00-20:00"), ActiveHours.parse("22:00-06:00")
    inside = {
        h: (office.contains(at(BERLIN, 2026, 6, 1, *h)), night.contains(at(BERLIN, 2026, 6, 1, *h)))
        for h in [(7, 59), (8, 0), (19, 59), (20, 0), (21, 59), (22, 0), (0, 0), (5, 59), (6, 0)]
    }
    assert inside == {
        (7, 59): (False, False),
        (8, 0): (True, False),
        (19, 59): (True, False),
        (20, 0): (False, False),
        (21, 59): (False, False),
        (22, 0): (False, True),
        (0, 0): (False, True),
        (5, 59): (False, True),
        (6, 0): (False, False),
    }
    assert ActiveHours.parse("20:00-24:00").contains(at(BERLIN, 2026, 6, 1, 23, 59))


def test_dst_inside_the_active_hours() -> None:
    half_hourly = Timing(tz=BERLIN, cron="*/30 * * * *", active=ActiveHours.parse("01:00-05:00"))
    spring = half_hourly.upcoming(at(BERLIN, 2026, 3, 29), 7)
    assert local(spring) == [
        "2026-03-29 01:00:00+0100",
        "2026-03-29 01:30:00+0100",
        "2026-03-29 03:00:00+0200",  # 02:00-03:00 does not exist
        "2026-03-29 03:30:00+0200",
        "2026-03-29 04:00:00+0200",
        "2026-03-29 04:30:00+0200",
        "2026-03-30 01:00:00+0200",
    ]
    every = Timing(tz=BERLIN, every_s=1800.0, active=ActiveHours.parse("01:00-05:00"))
    fall = every.upcoming(at(BERLIN, 2026, 10, 25), 11)
    assert local(fall) == [
        "2026-10-25 01:00:00+0200",
        "2026-10-25 01:30:00+0200",
        "2026-10-25 02:00:00+0200",
        "2026-10-25 02:30:00+0200",
        "2026-10-25 02:00:00+0100",  # the repeated hour is inside the hours again
        "2026-10-25 02:30:00+0100",
        "2026-10-25 03:00:00+0100",
        "2026-10-25 03:30:00+0100",
        "2026-10-25 04:00:00+0100",
        "2026-10-25 04:30:00+0100",
        "2026-10-26 01:00:00+0100",
    ]
    assert every.upcoming(at(BERLIN, 2026, 10, 25), 11) == half_hourly.upcoming(
        at(BERLIN, 2026, 10, 25), 11
    )


def test_at_is_in_the_schedules_zone_and_passes() -> None:
    once = Timing(tz=BERLIN, at=at(BERLIN, 2026, 12, 1, 9))
    assert once.next_after(datetime(2026, 11, 30, tzinfo=UTC)) == datetime(
        2026, 12, 1, 8, tzinfo=UTC
    )
    assert once.next_after(at(BERLIN, 2026, 12, 1, 9)) is None
    assert once.upcoming(datetime(2026, 1, 1, tzinfo=UTC), 3) == [at(BERLIN, 2026, 12, 1, 9)]
    assert once.missed(at(BERLIN, 2026, 11, 1), at(BERLIN, 2026, 12, 2)) == (
        at(BERLIN, 2026, 12, 1, 9),
        1,
    )


def test_a_week_down_is_counted_fast_and_runs_the_newest_slot() -> None:
    last, now = at(BERLIN, 2026, 6, 1, 12), at(BERLIN, 2026, 6, 8, 23, 0, 0, 400_000)
    started = clock.perf_counter()
    seconds = Timing(tz=BERLIN, every_s=1.0).missed(last, now)
    minutes = Timing(tz=BERLIN, cron="* * * * *").missed(last, now)
    daytime = Timing(tz=BERLIN, every_s=1.0, active=ActiveHours.parse("08:00-20:00")).missed(
        last, now
    )
    assert clock.perf_counter() - started < 1.0
    assert seconds == (at(BERLIN, 2026, 6, 8, 23), 1000)
    assert minutes == (at(BERLIN, 2026, 6, 8, 23), 1000)
    assert daytime == (at(BERLIN, 2026, 6, 8, 19, 59, 59), 1000)
    assert Timing(tz=BERLIN, cron="0 9 * * *").missed(last, at(BERLIN, 2026, 6, 1, 13)) == (None, 0)


def test_jitter_is_stable_under_ten_seconds_and_a_tenth_of_a_short_period() -> None:
    assert jitter_for("morning-check", None) == jitter_for("morning-check", None)
    assert jitter_for("sched-13482", None) < 10.0  # the hash is a hair under 1
    assert jitter_for("sched-270", 5.0) < 0.5
    assert jitter_for("once", 0.0) == 0.0
    spread = sorted(jitter_for(f"schedule-{i}", None) for i in range(200))
    assert len(set(spread)) > 190 and spread[0] < 0.5 and spread[-1] > 9.5
    assert max(jitter_for(f"schedule-{i}", 5.0) for i in range(200)) < 0.5


@given(key=st.text(max_size=64), period=st.one_of(st.none(), st.floats(1, 86_400)))
def test_jitter_is_in_range_for_any_key(key: str, period: float | None) -> None:
    jitter = jitter_for(key, period)
    assert 0 <= jitter < (10.0 if period is None else min(10.0, period / 10))


@pytest.mark.parametrize(
    "text,seconds",
    [
        ("90s", 90),
        ("15m", 900),
        ("2h", 7200),
        ("1d", 86_400),
        ("1h30m", 5400),
        ("1h 30m", 5400),
        (" 5S ", 5),
        ("1.5h", 5400),
        ("250ms", 0.25),
        ("1w", 604_800),
    ],
)
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "5", "m", "5 minutes", "-5m", "1h30", "5x", "soon", "1e3s"])
def test_a_bad_duration_says_how_to_write_one(text: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse_duration(text)
    assert str(caught.value) == (
        f"{text!r} is not a duration; write a number and a unit: 90s, 15m, 2h, 1d"
    )


def test_the_newest_missed_slot_is_found_across_the_hour_a_fall_back_repeats() -> None:
    """Found by the property above: the backward search walks wall times, and an hour repeated
    after `now`'s wall time was missed (or the day before was taken for the newest)."""
    daily = Timing(tz=BERLIN, cron="30 2 * * *")
    last = at(BERLIN, 2026, 10, 25, 2, 29, 59)  # 00:29:59 UTC
    now = at(BERLIN, 2026, 10, 25, 2, 0, fold=1)  # 01:00 UTC: 02:30 CEST came between
    assert daily.missed(last, now, cap=1) == (at(BERLIN, 2026, 10, 25, 2, 30), 1)
    sevens = Timing(tz=BERLIN, cron="*/7 2-3 * * *", active=ActiveHours.parse("02:15-03:10"))
    newest, count = sevens.missed(at(BERLIN, 2026, 10, 24, 3, 0), now, cap=1)
    assert (newest, count) == (at(BERLIN, 2026, 10, 25, 2, 56), 1), "02:56 CEST, not earlier"
