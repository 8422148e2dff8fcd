"""The Usage page's chart of use per day (adapters/admin/usage_chart.py), read as the SVG a
browser gets: one bar a day, the largest day the full height and the others in proportion,
each bar's tooltip the day and what it used (dollars and tokens where both exist, tokens where
the dollars are zero: a model without a price), the axis labelled with the largest day; a
month of zeros still draws every day, with no division by zero."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import date, timedelta

from adapters.admin.usage_chart import day_bars
from runtime.providers.base import Usage
from runtime.spend import Spend

SVG = "{http://www.w3.org/2000/svg}"
START = date(2026, 10, 29)


def spend(usd: float, tokens: int) -> Spend:
    """`tokens` of a day, half in and half out; no call at all when there are none."""
    usage = Usage(input_tokens=tokens - tokens // 2, output_tokens=tokens // 2)
    return Spend(usage, usd, 1 if tokens else 0)


def drawn(dollars: list[float], tokens: list[int] | None = None) -> ET.Element:
    tokens = tokens or [1000 if usd else 0 for usd in dollars]
    days = [
        (START + timedelta(days=n), spend(usd, used))
        for n, (usd, used) in enumerate(zip(dollars, tokens, strict=True))
    ]
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
    assert shown[0][:2] == ("2026-10-29", "2026-10-29: no model calls")
    assert shown[10][1] == "2026-11-08: $1.25 and 1,000 tokens"
    assert shown[29][1] == "2026-11-27: $5.00 and 1,000 tokens"
    tallest = shown[29][2]
    assert tallest > 100 and shown[10][2] == tallest / 4
    assert all(0 < h < 2 for _, _, h in shown[:10]), "a day of nothing is a stub on the axis"
    texts = [t.text for t in svg.iter(f"{SVG}text")]
    assert texts == ["$5.00 and 1,000 tokens a day at most", "Oct 29", "Nov 27"]
    assert svg.get("aria-label") == (
        "Use per day, the last 30 days: $6.25 and 2,000 tokens in all, the most $5.00 and "
        "1,000 tokens on 2026-11-27"
    )


def test_thirty_days_of_nothing_still_draw_thirty_days() -> None:
    svg = drawn([0.0] * 30)
    shown = bars(svg)
    assert len(shown) == 30 and len({h for _, _, h in shown}) == 1 and shown[0][2] > 0
    assert next(t.text for t in svg.iter(f"{SVG}text")) == "No model calls in these days"
    assert svg.get("aria-label") == "Use per day, the last 30 days: nothing spent"


def test_small_amounts_keep_their_cents_fraction() -> None:
    svg = drawn([0.0123, 0.0482])
    assert [t for _, t, _ in bars(svg)] == [
        "2026-10-29: $0.0123 and 1,000 tokens",
        "2026-10-30: $0.0482 and 1,000 tokens",
    ]


def test_a_model_without_a_price_is_drawn_in_tokens() -> None:
    """The offline model costs $0.00: its days are as tall as their tokens, and said in them."""
    tokens = [0] * 30
    tokens[3], tokens[29] = 47_901, 191_604
    svg = drawn([0.0] * 30, tokens)
    shown = bars(svg)
    assert shown[3][1] == "2026-11-01: 47,901 tokens"
    assert shown[29][1] == "2026-11-27: 191,604 tokens"
    assert shown[29][2] > 100 and shown[3][2] == shown[29][2] * 47_901 / 191_604
    assert next(t.text for t in svg.iter(f"{SVG}text")) == "191,604 tokens a day at most"
    assert "$" not in str(ET.tostring(svg, encoding="unicode"))
    assert svg.get("aria-label") == (
        "Use per day, the last 30 days: 239,505 tokens in all, the most 191,604 tokens on "
        "2026-11-27"
    )


def test_priced_and_free_days_together_are_drawn_in_tokens() -> None:
    """A day of a priced model beside a day of a free one: tokens measure both, and the
    priced day still says its dollars."""
    svg = drawn([0.5, 0.0], [1_000, 4_000])
    shown = bars(svg)
    assert [t for _, t, _ in shown] == [
        "2026-10-29: $0.50 and 1,000 tokens",
        "2026-10-30: 4,000 tokens",
    ]
    assert shown[0][2] == shown[1][2] / 4
