"""The Usage page's chart of spend per day, drawn here as inline SVG: no script, no asset
fetched, so it shows under the console's Content-Security-Policy and in any browser. One bar a
day, its height by dollars against the largest day; each bar's title (a browser's tooltip)
says the day and the amount. A month of zeros still reads: every day a stub on the axis."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from markupsafe import Markup, escape

from bridge.spend.words import money

WIDTH, HEIGHT = 720, 220  # the viewBox: the chart scales to the page's width
LEFT, TOP, BOTTOM = 8, 28, 24  # room for the largest value above, the days below
STUB = 1.5  # a day with no spend: a line on the axis, so each day is still there to hover
BAR = 0.7  # of a day's slot
INK, AXIS, TEXT = "#1f5fbf", "#8a94a6", "#5b6575"


def day_bars(days: Sequence[tuple[date, float]]) -> Markup:
    """The SVG of `days` (oldest first, dollars each)."""
    largest = max((usd for _, usd in days), default=0.0)
    plot_w, plot_h = WIDTH - 2 * LEFT, HEIGHT - TOP - BOTTOM
    base = TOP + plot_h
    slot = plot_w / max(len(days), 1)
    summary = _summary(days, largest)
    parts = [
        f'<svg class="chart" role="img" aria-label="{escape(summary)}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" width="100%" xmlns="http://www.w3.org/2000/svg">',
        f"<title>{escape(summary)}</title>",
        f'<text class="axis-max" x="{LEFT}" y="{TOP - 10}" font-size="13" fill="{TEXT}">'
        f"{escape(money(largest))} a day at most</text>",
        f'<line x1="{LEFT}" y1="{TOP}" x2="{WIDTH - LEFT}" y2="{TOP}" stroke="{AXIS}" '
        'stroke-dasharray="3 3" stroke-width="0.5"/>',
    ]
    for n, (day, usd) in enumerate(days):
        tall = plot_h * usd / largest if largest > 0 else 0.0
        tall = max(tall, STUB)
        x = LEFT + n * slot + slot * (1 - BAR) / 2
        said = f"{day.isoformat()}: {money(usd)}"
        parts.append(
            f'<g class="day" data-day="{day.isoformat()}"><title>{escape(said)}</title>'
            f'<rect x="{LEFT + n * slot:.2f}" y="{TOP}" width="{slot:.2f}" height="{plot_h}" '
            'fill="transparent"/>'
            f'<rect class="bar" x="{x:.2f}" y="{base - tall:.2f}" width="{slot * BAR:.2f}" '
            f'height="{tall:.2f}" fill="{INK}"/></g>'
        )
    parts.append(f'<line x1="{LEFT}" y1="{base}" x2="{WIDTH - LEFT}" y2="{base}" stroke="{AXIS}"/>')
    if days:
        first, last = days[0][0], days[-1][0]
        y = base + 16
        parts += [
            f'<text x="{LEFT}" y="{y}" font-size="12" fill="{TEXT}">{first:%b %d}</text>',
            f'<text x="{WIDTH - LEFT}" y="{y}" font-size="12" fill="{TEXT}" '
            f'text-anchor="end">{last:%b %d}</text>',
        ]
    parts.append("</svg>")
    return Markup("".join(parts))


def _summary(days: Sequence[tuple[date, float]], largest: float) -> str:
    """The chart in one sentence, for a screen reader (and the chart's own title)."""
    total = sum(usd for _, usd in days)
    if largest <= 0:
        return f"Spend per day, the last {len(days)} days: nothing spent"
    top = max(days, key=lambda d: d[1])[0]
    return (
        f"Spend per day, the last {len(days)} days: {money(total)} in all, "
        f"the most {money(largest)} on {top.isoformat()}"
    )
