"""What one approval of a held turn lets it spend (issue 38): `approve_usd`/`approve_tokens`,
by default one warn step (limit x (1 - warn_at)), or a fifth of the limit without warn_at."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from config.budgets import BudgetConfig


def test_an_approval_is_one_warn_step_by_default() -> None:
    assert BudgetConfig(limit_usd=20.0, warn_at=0.75).approve_step == pytest.approx(5.0)
    assert BudgetConfig(limit_usd=20.0, warn_at=None).approve_step == pytest.approx(4.0)
    assert BudgetConfig(limit_tokens=1_000_000).approve_step == pytest.approx(200_000)


def test_an_approval_s_own_amount_wins() -> None:
    assert BudgetConfig(limit_usd=20.0, approve_usd=1.5).approve_step == 1.5
    assert BudgetConfig(limit_tokens=1000, approve_tokens=50).approve_step == 50


@pytest.mark.parametrize(
    "fields",
    [
        {"limit_tokens": 1000, "approve_usd": 1.0},
        {"limit_usd": 1.0, "approve_tokens": 10},
        {"limit_usd": 1.0, "approve_usd": 0},
    ],
)
def test_an_approval_counts_what_its_budget_counts(fields: dict[str, float]) -> None:
    with pytest.raises(ValidationError):
        BudgetConfig.model_validate(fields)
