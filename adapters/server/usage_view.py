"""What `switchboard usage` prints of a workspace's `UsageReport`: a table for people, or a
JSON document for scripts with the same numbers (tokens exact, dollars as stored, days as
ISO dates, times in the workspace's timezone)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any
from zoneinfo import ZoneInfo

from bridge.session_names import shorten
from bridge.spend import words
from bridge.spend.budgets import Standing
from bridge.spend.report import NOBODY, UsageReport
from config.timing import zone
from runtime.spend import Spend

HEADER = "Workspace {id}: spend as of {now} {tz}"
NO_CALLS = "  No model calls yet: what they cost shows here once an agent answers."
COLUMNS = ("cost", "tokens in", "cached", "tokens out", "calls")
NO_BUDGETS = "  No budgets are set ([[workspaces.budgets]] in the config)."
NONE = "none"
NO_USE = "no model calls"
NO_LONGER_KEPT = "a session no longer kept"
NAME_CHARS = 56  # of a session's name in the table: its rows stay near a terminal's width


@dataclass(frozen=True, slots=True)
class Shown:
    """A workspace's report, whether any model call was ever charged to it, and its
    sessions by name ("console (you) · assistant", by id: `bridge/session_names.py`)."""

    report: UsageReport
    ever_called: bool
    names: Mapping[str, str] = field(default_factory=dict)

    def name(self, session_id: str) -> str:
        """Its name, cut to fit the table, its agent kept whole."""
        name, dot, agent = (self.names.get(session_id) or NO_LONGER_KEPT).rpartition(" \u00b7 ")
        if not dot:
            return shorten(agent, NAME_CHARS)
        return f"{shorten(name, max(NAME_CHARS - len(agent) - 3, 16))}{dot}{agent}"


def spend_cells(spend: Spend) -> tuple[str, ...]:
    """cost, tokens in (cached or not), of which cached (read or written), out, calls."""
    u = spend.usage
    cached = u.cache_read_tokens + u.cache_write_tokens
    return (
        words.money(spend.cost_usd),
        f"{u.request_tokens:,}",
        f"{cached:,}",
        f"{u.output_tokens:,}",
        f"{spend.calls:,}",
    )


def table(shown: Shown, now: float) -> str:
    r = shown.report
    tz = zone(r.timezone)
    header = HEADER.format(
        id=r.workspace_id, now=f"{datetime.fromtimestamp(now, tz):%Y-%m-%d %H:%M}", tz=tz.key
    )
    if not shown.ever_called:
        return "\n".join([header, NO_CALLS, *_budgets(r.budgets, now, tz)])
    rows: list[tuple[str, tuple[str, ...]] | str] = [
        ("Today", spend_cells(r.today)),
        ("This month", spend_cells(r.month)),
        *[(f"  of which {what}", spend_cells(s)) for what, s in r.month_apart if s.calls],
    ]
    sections = [
        ("By agent, this month", r.agents),
        ("By operator, this month", r.operators),
        ("By schedule and trigger, this month", r.schedules),
        ("Sessions that used the most, this month", [(shown.name(s), v) for s, v in r.sessions]),
    ]
    for title, found in sections:
        rows.append(title if found else f"{title}: {NONE}")
        rows += [(f"  {name}", spend_cells(spend)) for name, spend in found]
    if r.days:  # none with --days 0
        rows += _days(r.days)
    return "\n".join([header, *_aligned(rows), *_budgets(r.budgets, now, tz)])


def _days(days: Sequence[tuple[date, Spend]]) -> list[tuple[str, tuple[str, ...]] | str]:
    """The days with use, one row each; a stretch of days without, one line; then all the
    days summed (they add up to what the rows above say)."""
    rows: list[tuple[str, tuple[str, ...]] | str] = [f"Per day, the last {len(days)} days"]
    empty: list[date] = []

    def stretch() -> None:
        if len(empty) == 1:
            rows.append(f"  {empty[0].isoformat()}: {NO_USE}")
        elif empty:
            first, last = empty[0].isoformat(), empty[-1].isoformat()
            rows.append(f"  {first} to {last}: {NO_USE} ({len(empty)} days)")
        empty.clear()

    for day, spend in days:
        if spend.calls:
            stretch()
            rows.append((f"  {day.isoformat()}", spend_cells(spend)))
        else:
            empty.append(day)
    stretch()
    rows.append((f"  all {len(days)} days", spend_cells(sum((s for _, s in days), Spend()))))
    return rows


def _aligned(rows: Sequence[tuple[str, tuple[str, ...]] | str]) -> list[str]:
    """Titles as they are; each spend row's cells right-aligned under COLUMNS."""
    cells = [row for row in rows if not isinstance(row, str)]
    label = max(len(name) for name, _ in cells)
    widths = [max(len(col), *(len(v[i]) for _, v in cells)) for i, col in enumerate(COLUMNS)]

    def line(name: str, values: Sequence[str]) -> str:
        shown = "  ".join(v.rjust(w) for v, w in zip(values, widths, strict=True))
        return f"  {name.ljust(label)}  {shown}"

    out = [line("", COLUMNS)]
    for row in rows:
        out.append(f"  {row}" if isinstance(row, str) else line(*row))
    return [text.rstrip() for text in out]


def _budgets(budgets: Sequence[Standing], now: float, tz: ZoneInfo) -> list[str]:
    if not budgets:
        return [NO_BUDGETS]
    lines = ["  Budgets:"]
    for s in budgets:
        title, b = words.budget_title(s.budget), s.budget
        used, limit = words.amount(b, s.used), words.amount(b, s.limit)
        renews = words.until(s.end, tz, now).strip()
        lines.append(f"    {title}: {used} of {limit} ({s.share:.0%}). {renews}")
    return lines


def document(shown: Sequence[Shown], now: float) -> dict[str, Any]:
    """The JSON document: every number a number, every key always present."""
    return {
        "as_of": datetime.fromtimestamp(now, UTC).isoformat(),
        "workspaces": [_workspace(s) for s in shown],
    }


def _workspace(shown: Shown) -> dict[str, Any]:
    r = shown.report
    tz = zone(r.timezone)
    return {
        "id": r.workspace_id,
        "timezone": r.timezone,
        "today": spend_json(r.today),
        "month": spend_json(r.month),
        "month_of_which": {what: spend_json(s) for what, s in r.month_apart},
        "days": [{"date": d.isoformat(), **spend_json(s)} for d, s in r.days],
        "agents": [{"id": name, **spend_json(s)} for name, s in r.agents],
        "operators": [{"id": None if o == NOBODY else o, **spend_json(s)} for o, s in r.operators],
        "schedules": [_schedule(name, s) for name, s in r.schedules],
        "sessions": [
            {"id": sid, "name": shown.names.get(sid), **spend_json(s)} for sid, s in r.sessions
        ],
        "budgets": [_budget(s, tz) for s in r.budgets],
    }


def spend_json(s: Spend) -> dict[str, Any]:
    u = s.usage
    return {
        "cost_usd": s.cost_usd,
        "input_tokens": u.input_tokens,
        "cache_read_tokens": u.cache_read_tokens,
        "cache_write_tokens": u.cache_write_tokens,
        "output_tokens": u.output_tokens,
        "calls": s.calls,
    }


def _schedule(name: str, s: Spend) -> dict[str, Any]:
    """`schedule nightly` -> kind `schedule`, id `nightly` (a trigger's likewise)."""
    kind, _, id = name.partition(" ")
    return {"kind": kind, "id": id, **spend_json(s)}


def _budget(s: Standing, tz: ZoneInfo) -> dict[str, Any]:
    b = s.budget
    return {
        "scope": b.scope,
        "id": b.id,
        "period": b.period,
        **(
            {"unit": "usd", "used": s.used, "limit": s.limit}
            if b.limit_usd is not None
            else {"unit": "tokens", "used": int(s.used), "limit": int(s.limit)}
        ),
        "share": s.share,
        "starts_at": datetime.fromtimestamp(s.start, tz).isoformat(),
        "renews_at": datetime.fromtimestamp(s.end, tz).isoformat(),
    }
