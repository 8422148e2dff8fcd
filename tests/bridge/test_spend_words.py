"""How spend reads in chat: amounts people can compare, budgets by name, renewals in the
workspace's own time."""

from __future__ import annotations

from zoneinfo import ZoneInfo

from bridge.spend.periods import period_bounds
from bridge.spend.words import money, until


def test_amounts_show_cents_or_what_cents_would_hide() -> None:
    assert [money(v) for v in (20, 0.05, 0.0482, 1234.5, 0)] == [
        "$20.00",
        "$0.05",
        "$0.0482",
        "$1,234.50",
        "$0.00",
    ]


def test_a_month_renews_in_days_and_a_day_at_local_midnight() -> None:
    berlin = ZoneInfo("Europe/Berlin")
    now = 1_795_734_000.0 + 3600  # 2026-11-27 01:00 in Berlin
    start, end = period_bounds("day", berlin, now)
    assert end - start == 86_400
    assert until(end, berlin, now) == (
        " The budget renews at 2026-11-28 00:00 Europe/Berlin (in 23 h)."
    )
    _, month_end = period_bounds("month", berlin, now)
    assert until(month_end, berlin, now) == (
        " The budget renews at 2026-12-01 00:00 Europe/Berlin (in 3 d 23 h)."
    )


def test_a_day_of_the_clock_change_is_23_hours_long() -> None:
    berlin = ZoneInfo("Europe/Berlin")
    start, end = period_bounds("day", berlin, 1_774_778_400.0)  # 2026-03-29, 12:00 UTC
    assert end - start == 23 * 3600
    assert start % 900 == 0 and end % 900 == 0, "every period is whole quarter hours"
