"""Which budgets a model call counts against, and where each stands in its period."""

from __future__ import annotations

from dataclasses import dataclass

from bridge.spend.periods import period_bounds
from config.budgets import BudgetConfig
from config.schema import WorkspaceConfig
from config.timing import zone
from runtime.spend import Charge, Spend
from runtime.store.usage import UsageFilter, UsageLedger


def schedule_payer(schedule_id: str) -> str:
    """Who a schedule's turns are charged to (the sender of the message it starts)."""
    return f"schedule {schedule_id}"


def applies(budget: BudgetConfig, workspace_id: str, charge: Charge) -> bool:
    agent = f"{workspace_id}/{budget.id}"
    match budget.scope:
        case "workspace":
            return charge.agent_id.startswith(f"{workspace_id}/")
        case "agent":  # its private children's calls count as its own
            return charge.agent_id == agent or charge.agent_id.startswith(f"{agent}/")
        case "operator":
            return charge.payer == budget.id
        case "schedule":
            return charge.payer == schedule_payer(budget.id or "")
    return False


def usage_filter(budget: BudgetConfig, workspace_id: str, start: float, end: float) -> UsageFilter:
    """The calls that count against `budget` in [start, end)."""
    match budget.scope:
        case "agent":
            return UsageFilter(start, end, agent_family=f"{workspace_id}/{budget.id}")
        case "operator":
            return UsageFilter(start, end, agent_prefix=f"{workspace_id}/", payer=budget.id)
        case "schedule":
            payer = schedule_payer(budget.id or "")
            return UsageFilter(start, end, agent_prefix=f"{workspace_id}/", payer=payer)
    return UsageFilter(start, end, agent_prefix=f"{workspace_id}/")


@dataclass(frozen=True, slots=True)
class Standing:
    """A budget in its current period: what is spent of it, and until when the period runs."""

    budget: BudgetConfig
    spent: Spend
    start: float
    end: float
    reserved: float = 0.0  # by calls under way (the gate's reading only)

    @property
    def used(self) -> float:
        return self.spent.cost_usd if self.budget.limit_usd is not None else self.spent.tokens

    @property
    def limit(self) -> float:
        return self.budget.limit

    @property
    def share(self) -> float:
        return self.used / self.limit

    @property
    def dollars(self) -> bool:
        return self.budget.limit_usd is not None

    def would_pass(self, cost_usd: float, tokens: int, ceiling: float | None = None) -> bool:
        """Whether a call of this estimated cost and size, with what calls under way hold,
        would take it past its limit (or past `ceiling`, an approval's)."""
        more = cost_usd if self.dollars else tokens
        return self.used + self.reserved + more > (self.limit if ceiling is None else ceiling)


async def standing(
    ledger: UsageLedger, workspace: WorkspaceConfig, budget: BudgetConfig, now: float
) -> Standing:
    start, end = period_bounds(budget.period, zone(workspace.timezone), now)
    spent = await ledger.total(usage_filter(budget, workspace.id, start, end))
    return Standing(budget, spent, start, end)


async def standings(ledger: UsageLedger, workspace: WorkspaceConfig, now: float) -> list[Standing]:
    return [await standing(ledger, workspace, b, now) for b in workspace.budgets]
