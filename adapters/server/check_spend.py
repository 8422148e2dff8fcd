"""What `check-config` says of spend: the model's price (a warning when it has none) and each
workspace's budgets."""

from __future__ import annotations

from config.budgets import BudgetConfig
from config.prices import PriceTable
from config.schema import SwitchboardConfig

UNPRICED = (
    "warning: model {model!r} has no price, so its calls count as $0 and no limit_usd budget "
    'can hold them; add [provider.prices."{model}"] input = ..., output = ... (dollars per '
    "million tokens)"
)


def price_line(config: SwitchboardConfig) -> str:
    model = config.provider.model if config.provider.kind == "anthropic" else "offline"
    price = PriceTable.with_overrides(config.provider.prices).of(model)
    if price is None:
        return UNPRICED.format(model=model)
    return (
        f"price: ${price.input:g} in, ${price.output:g} out, ${price.cache_write:g} cache write, "
        f"${price.cache_read:g} cache read per million tokens ({price.source})"
    )


def budget_line(b: BudgetConfig, timezone: str) -> str:
    limit = f"${b.limit_usd:,.2f}" if b.limit_usd is not None else f"{b.limit_tokens:,} tokens"
    warn = f", warns the primary at {b.warn_at:.0%}" if b.warn_at else ""
    step = f"${b.approve_step:,.2f}" if b.limit_usd is not None else f"{int(b.approve_step):,}"
    approve = f", an approval lets a turn spend {step} more"
    return f"  budget {b.key}: {limit} a {b.period} ({timezone}){warn}{approve}"
