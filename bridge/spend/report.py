"""A workspace's spend, as `/usage`, the console's usage page and `switchboard usage` show
it: today and this month (and of it, what memory and compaction cost apart), the last 30
days, by agent, operator, schedule and session, and each budget against its limit."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import date

from bridge.spend.budgets import Standing, standings
from bridge.spend.periods import last_days, period_bounds
from config.schema import WorkspaceConfig
from config.timing import zone
from runtime.providers.base import Usage
from runtime.spend import CallPurpose, Spend
from runtime.store.usage import UsageFilter, UsageLedger

DAYS = 30
TOP_SESSIONS = 10
NOBODY = "(nobody: between turns)"  # a call no one's message started: /compact when idle
# Calls that are not a turn's own rounds, shown apart by what they were for (issue 40): the
# model calls memory makes (a flush before compaction or /new), and the summaries.
APART: dict[str, str] = {CallPurpose.MEMORY_FLUSH: "memory", CallPurpose.COMPACTION: "compaction"}


@dataclass(frozen=True, slots=True)
class UsageReport:
    workspace_id: str
    timezone: str
    today: Spend
    month: Spend
    month_apart: list[tuple[str, Spend]]  # of this month: memory, compaction (always both)
    days: list[tuple[date, Spend]]  # the last 30, oldest first
    agents: list[tuple[str, Spend]]  # this month; a child's calls count as its agent's
    operators: list[tuple[str, Spend]]  # this month, by whoever's message started the turn
    schedules: list[tuple[str, Spend]]  # this month, schedules and triggers by id
    sessions: list[tuple[str, Spend]]  # this month, the costliest
    budgets: list[Standing]


def _costliest(found: dict[str, Spend]) -> list[tuple[str, Spend]]:
    return sorted(found.items(), key=lambda kv: (-kv[1].cost_usd, -kv[1].tokens, kv[0]))


async def usage_report(
    ledger: UsageLedger, workspace: WorkspaceConfig, now: float, days: int = DAYS
) -> UsageReport:
    tz = zone(workspace.timezone)
    prefix = f"{workspace.id}/"
    day_start, day_end = period_bounds("day", tz, now)
    month_start, month_end = period_bounds("month", tz, now)
    month = UsageFilter(month_start, month_end, agent_prefix=prefix)
    per_day = [
        (d, await ledger.total(UsageFilter(start, end, agent_prefix=prefix)))
        for d, start, end in last_days(tz, now, days)
    ]
    agents: dict[str, Spend] = defaultdict(Spend)
    for agent_id, spend in await ledger.grouped(month, "agent_id"):
        name = (agent_id or "").removeprefix(prefix).split("/")[0]
        agents[name] += spend
    operators: dict[str, Spend] = {}
    schedules: dict[str, Spend] = {}
    for payer, spend in await ledger.grouped(month, "payer"):
        kind, _, name = (payer or "").partition(" ")
        if kind in ("schedule", "trigger") and name:
            schedules[f"{kind} {name}"] = spend
        else:
            operators[payer or NOBODY] = spend
    apart = {shown: Spend() for shown in APART.values()}
    for purpose, spend in await ledger.grouped(month, "purpose"):
        if (shown := APART.get(purpose or "")) is not None:
            apart[shown] += spend
    return UsageReport(
        workspace_id=workspace.id,
        timezone=workspace.timezone,
        today=await ledger.total(UsageFilter(day_start, day_end, agent_prefix=prefix)),
        month=await ledger.total(month),
        month_apart=list(apart.items()),
        days=per_day,
        agents=_costliest(agents),
        operators=_costliest(operators),
        schedules=_costliest(schedules),
        sessions=[
            (s or "", spend)
            for s, spend in await ledger.grouped(month, "session_id", limit=TOP_SESSIONS)
        ],
        budgets=await standings(ledger, workspace, now),
    )


def tokens_line(usage: Usage) -> str:
    """12,345 in (3,000 cached) / 678 out."""
    cached = usage.cache_read_tokens + usage.cache_write_tokens
    inside = f" ({cached:,} cached)" if cached else ""
    return f"{usage.request_tokens:,} in{inside} / {usage.output_tokens:,} out"
