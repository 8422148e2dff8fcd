"""/usage and /approve_spend (also typed /approve-spend) in chat."""

from __future__ import annotations

import logging

from bridge.sessions import Sessions
from bridge.spend import words
from bridge.spend.report import UsageReport, tokens_line, usage_report
from bridge.types import Route
from config.schema import WorkspaceConfig
from runtime.engine import Runtime
from runtime.spend import Spend

log = logging.getLogger(__name__)

SHOWN = 5  # agents, operators, schedules listed in /usage


def spend_line(spend: Spend) -> str:
    calls = f"{spend.calls:,} call{'' if spend.calls == 1 else 's'}"
    return f"{words.money(spend.cost_usd)} ({tokens_line(spend.usage)}, {calls})"


def usage_text(report: UsageReport) -> str:
    lines = [
        f"Spend in workspace {report.workspace_id} ({report.timezone}):",
        f"Today: {spend_line(report.today)}",
        f"This month: {spend_line(report.month)}",
    ]
    lines += [f"  of which {what}: {spend_line(s)}" for what, s in report.month_apart if s.calls]
    for title, found in (
        ("By agent", report.agents),
        ("By operator", report.operators),
        ("By schedule and trigger", report.schedules),
    ):
        if found:
            lines.append(f"{title}, this month:")
            lines += [f"  {name}: {spend_line(spend)}" for name, spend in found[:SHOWN]]
    if report.budgets:
        lines.append("Budgets:")
    for s in report.budgets:
        used, limit = words.amount(s.budget, s.used), words.amount(s.budget, s.limit)
        lines.append(f"  {words.budget_title(s.budget)}: {used} of {limit} ({s.share:.0%})")
    if not report.budgets:
        lines.append("No budgets are set ([[workspaces.budgets]] in the config).")
    return "\n".join(lines)


class SpendCommands:
    def __init__(self, runtime: Runtime, sessions: Sessions) -> None:
        self._runtime = runtime
        self._sessions = sessions

    async def usage(self, workspace: WorkspaceConfig) -> str:
        report = await usage_report(
            self._runtime.store.usage, workspace, self._runtime.clock.wall()
        )
        return usage_text(report)

    def approve(
        self, route: Route, workspace: WorkspaceConfig, run_id: str, operator_id: str
    ) -> str:
        """The held turn named (a button names it), else the one of this conversation."""
        held = self._runtime.held
        session_id = held.session_of(run_id) if run_id else self._sessions.session_of(route)
        agent = self._runtime.session(session_id).agent_id if session_id else ""
        if session_id is None or not agent.startswith(f"{workspace.id}/"):
            return words.NO_SUCH_HELD.format(run_id=run_id) if run_id else words.NOTHING_HELD
        if held.approve(session_id, operator_id) is None:
            return words.NOTHING_HELD
        log.info("spend approved", extra={"session_id": session_id, "by": operator_id})
        return words.APPROVED.format(agent=agent)
