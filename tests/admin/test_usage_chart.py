"""The Usage page's chart of spend per day (adapters/admin/usage_chart.py), read as the SVG a
browser gets: one bar a day, the largest day the full height and the others in proportion,
each bar's tooltip the day and its amount, the axis labelled with the largest value; a month
of zeros still draws every day, with no division by zero."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import date, timedelta

from adapters.admin.usage_chart import day_bars

SVG = "{http://www.w3.org/2000/svg}"
START = date(2026, 10, 29)


def drawn(dollars: list[float]) -> ET.Element:
    days = [(START + timedelta(days=n), usd) for n, usd in enumerate(dollars)]
    return ET.fromstring(str(day_bars(days)))


def bars(svg: ET.Element) -> list[tuple[str, str, float]]:
    """Each day's (data-day, tooltip, bar height), in order."""
    found = []
    for day in svg.iter(f"{SVG}g"):
        title = day.find(f"{SVG}title")
        [bar] = [r for r in day.iter(f"{SVG}rect") if r.get("class") == "bar"]
        assert title is not None and title.text is not None
        found.append((day.get("data-day", ""), title.text, float(bar.get("height", "nan"))))
    return found


def test_each_day_is_a_bar_as_tall_as_its_share_of_the_largest_day() -> None:
    dollars = [0.0] * 30
    dollars[10], dollars[29] = 1.25, 5.0
    svg = drawn(dollars)
    shown = bars(svg)
    assert len(shown) == 30
    assert shown[0][:2] == ("2026-10-29", "2026-10-29: $0.00")
    assert shown[10][1] == "2026-11-08: $1.25" and shown[29][1] == "2026-11-27: $5.00"
    tallest = shown[29][2]
    assert tallest > 100 and shown[10][2] == tallest / 4
    assert all(0 < h < 2 for _, _, h in shown[:10]), "a day of nothing is a stub on the axis"
    texts = [t.text for t in svg.iter(f"{SVG}text")]
    assert texts == ["$5.00 a day at most", "Oct 29", "Nov 27"]
    assert svg.get("aria-label") == (
        "Spend per day, the last 30 days: $6.25 in all, the most $5.00 on 2026-11-27"
    )


def test_thirty_days_of_nothing_still_draw_thirty_days() -> None:
    svg = drawn([0.0] * 30)
    shown = bars(svg)
    assert len(shown) == 30 and len({h for _, _, h in shown}) == 1 and shown[0][2] > 0
    assert next(t.text for t in svg.iter(f"{SVG}text")) == "$0.00 a day at most"
    assert svg.get("aria-label") == "Spend per day, the last 30 days: nothing spent"


def test_small_amounts_keep_their_cents_fraction() -> None:
    svg = drawn([0.0123, 0.0482])
    assert [t for _, t, _ in bars(svg)] == ["2026-10-29: $0.0123", "2026-10-30: $0.0482"]
