"""`[[workspaces.budgets]]`: spend limits, checked before each model call (DESIGN §4)."""

from __future__ import annotations

from collections import Counter
from typing import Literal

from pydantic import Field, model_validator

from config.problems import Problem, did_you_mean, raise_all
from config.strict import Strict

BudgetScope = Literal["workspace", "agent", "operator", "schedule"]


class BudgetConfig(Strict):
    scope: BudgetScope = "workspace"
    id: str | None = None  # the agent, operator or schedule (none for the workspace)
    period: Literal["day", "month"] = "day"  # in the workspace's timezone
    limit_usd: float | None = Field(None, gt=0)
    limit_tokens: int | None = Field(None, gt=0)
    warn_at: float | None = Field(0.8, gt=0, lt=1)  # of the limit: the primary is told once
    # What one approval (Approve spend, /approve_spend) lets a held turn spend past the limit;
    # by default one more warn step: limit x (1 - warn_at), or a fifth of the limit.
    approve_usd: float | None = Field(None, gt=0)
    approve_tokens: int | None = Field(None, gt=0)

    @model_validator(mode="after")
    def _one_limit(self) -> BudgetConfig:
        if (self.limit_usd is None) == (self.limit_tokens is None):
            raise ValueError("a budget has exactly one of limit_usd or limit_tokens")
        if self.scope == "workspace" and self.id is not None:
            raise ValueError('a budget with scope = "workspace" has no id')
        if self.scope != "workspace" and self.id is None:
            raise ValueError(f'a budget with scope = "{self.scope}" names its {self.scope}: id')
        if self.approve_usd is not None and self.limit_usd is None:
            raise ValueError("approve_usd goes with limit_usd (this budget counts tokens)")
        if self.approve_tokens is not None and self.limit_tokens is None:
            raise ValueError("approve_tokens goes with limit_tokens (this budget counts dollars)")
        return self

    @property
    def limit(self) -> float:
        return self.limit_usd or float(self.limit_tokens or 0)

    @property
    def approve_step(self) -> float:
        """What one approval lets a turn spend past the limit, in the limit's unit."""
        own = self.approve_usd if self.limit_usd is not None else self.approve_tokens
        if own is not None:
            return float(own)
        return self.limit * (1 - (self.warn_at if self.warn_at is not None else 0.8))

    @property
    def key(self) -> str:
        """What names it in notices and in the store: `workspace/day`, `agent:ops/month`."""
        who = self.scope if self.id is None else f"{self.scope}:{self.id}"
        return f"{who}/{self.period}"


def check_budgets(
    budgets: list[BudgetConfig],
    agents: set[str],
    operators: set[str],
    schedules: set[str],
) -> None:
    """Each budget names something that exists, and no budget is set twice."""
    known = {"agent": agents, "operator": operators, "schedule": schedules}
    found: list[Problem | str] = []
    for i, b in enumerate(budgets):
        if b.id is not None and b.id not in known[b.scope]:
            choices = ", ".join(sorted(known[b.scope])) or "none"
            found.append(
                Problem(
                    f"budget {b.key}: no {b.scope} {b.id!r} here (there are: {choices})"
                    f"{did_you_mean(b.id, known[b.scope])}",
                    ("budgets", i, "id"),
                )
            )
    twice = sorted(k for k, n in Counter(b.key for b in budgets).items() if n > 1)
    found += [f"budget {key} is set twice; keep one" for key in twice]
    raise_all(found)
