"""The Usage page's chart of use per day, drawn here as inline SVG: no script, no asset
fetched, so it shows under the console's Content-Security-Policy and in any browser. One bar a
day against the largest day; each bar's title (a browser's tooltip) says the day and what it
used. A month of zeros still reads: every day a stub on the axis.

Bars measure dollars when every day's calls had a price, else tokens: a model without a price
(the offline one) costs $0.00, and its tokens are what was spent. Both are said wherever both
exist ("$5.00 and 191,604 tokens")."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Protocol

from markupsafe import Markup, escape

from bridge.spend.words import money

WIDTH, HEIGHT = 720, 220  # the viewBox: the chart scales to the page's width
LEFT, TOP, BOTTOM = 8, 28, 24  # room for the largest value above, the days below
STUB = 1.5  # a day with no spend: a line on the axis, so each day is still there to hover
BAR = 0.7  # of a day's slot
INK, AXIS, TEXT = "#1f5fbf", "#8a94a6", "#5b6575"
NONE = "No model calls in these days"


class Spend(Protocol):
    """What some calls used (the runtime's `Spend`, as the report gives it)."""

    @property
    def cost_usd(self) -> float: ...
    @property
    def tokens(self) -> int: ...
    @property
    def calls(self) -> int: ...


@dataclass(frozen=True, slots=True)
class Total:
    cost_usd: float
    tokens: int
    calls: int


def by_dollars(days: Sequence[tuple[date, Spend]]) -> bool:
    """Whether the bars measure dollars: some were spent, and no day used tokens for free."""
    return any(s.cost_usd > 0 for _, s in days) and all(s.cost_usd > 0 for _, s in days if s.tokens)


def used(spend: Spend) -> str:
    """What a day (or the days) used: "$1.25 and 12,345 tokens", "12,345 tokens" when the
    dollars are zero, "no model calls"."""
    if not spend.tokens and not spend.calls:
        return "no model calls"
    tokens = f"{spend.tokens:,} tokens"
    return f"{money(spend.cost_usd)} and {tokens}" if spend.cost_usd > 0 else tokens


def day_bars(days: Sequence[tuple[date, Spend]]) -> Markup:
    """The SVG of `days` (oldest first, what each used)."""
    dollars = by_dollars(days)

    def value(spend: Spend) -> float:
        return spend.cost_usd if dollars else float(spend.tokens)

    top = max(days, key=lambda d: value(d[1]), default=None)
    largest = value(top[1]) if top is not None else 0.0
    plot_w, plot_h = WIDTH - 2 * LEFT, HEIGHT - TOP - BOTTOM
    base = TOP + plot_h
    slot = plot_w / max(len(days), 1)
    summary = _summary(days, top[0] if top is not None and largest > 0 else None)
    most = f"{used(top[1])} a day at most" if top is not None and largest > 0 else NONE
    parts = [
        f'<svg class="chart" role="img" aria-label="{escape(summary)}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" width="100%" xmlns="http://www.w3.org/2000/svg">',
        f"<title>{escape(summary)}</title>",
        f'<text class="axis-max" x="{LEFT}" y="{TOP - 10}" font-size="13" fill="{TEXT}">'
        f"{escape(most)}</text>",
        f'<line x1="{LEFT}" y1="{TOP}" x2="{WIDTH - LEFT}" y2="{TOP}" stroke="{AXIS}" '
        'stroke-dasharray="3 3" stroke-width="0.5"/>',
    ]
    for n, (day, spend) in enumerate(days):
        tall = plot_h * value(spend) / largest if largest > 0 else 0.0
        tall = max(tall, STUB)
        x = LEFT + n * slot + slot * (1 - BAR) / 2
        said = f"{day.isoformat()}: {used(spend)}"
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


def _summary(days: Sequence[tuple[date, Spend]], top: date | None) -> str:
    """The chart in one sentence, for a screen reader (and the chart's own title)."""
    total = Total(
        sum(s.cost_usd for _, s in days),
        sum(s.tokens for _, s in days),
        sum(s.calls for _, s in days),
    )
    if top is None:
        return f"Use per day, the last {len(days)} days: nothing spent"
    most = next(s for d, s in days if d == top)
    return (
        f"Use per day, the last {len(days)} days: {used(total)} in all, "
        f"the most {used(most)} on {top.isoformat()}"
    )
