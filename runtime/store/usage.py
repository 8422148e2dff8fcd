"""Model usage (`store.usage` reads it): one row per model call, written with its round by
`record`, which also adds it to its quarter hour's sums (per agent, payer and model); read
back summed, by period and by who was charged. A total over whole quarters (every period a
budget or a report asks for: midnight is a quarter's start in every timezone) reads the
sums, so a budget's check before each call reads at most a few thousand rows a month, not
every call. Nothing here is pruned: the totals must stay exact."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from config.prices import PriceTable
from runtime.providers.base import DEFAULT_PROVIDER, Usage
from runtime.spend import CallPurpose, Charge, Spend, UsageRecord, cost_of
from runtime.store.database import Row
from runtime.store.writer import Writer

SUMS = (
    "COALESCE(SUM(input_tokens), 0) AS input_tokens,"
    " COALESCE(SUM(output_tokens), 0) AS output_tokens,"
    " COALESCE(SUM(cache_read_tokens), 0) AS cache_read_tokens,"
    " COALESCE(SUM(cache_write_tokens), 0) AS cache_write_tokens,"
    " COALESCE(SUM(cost_usd), 0) AS cost_usd, COUNT(*) AS calls"
)
QUARTER_SUMS = SUMS.replace("COUNT(*)", "COALESCE(SUM(calls), 0)")

GroupBy = Literal["agent_id", "payer", "model", "provider", "session_id", "purpose"]
QUARTER_S = 900.0
NOBODY = ""  # the payer of a call nobody's message started, in the quarters' sums


def quarter_of(at: float) -> float:
    return at - at % QUARTER_S


@dataclass(frozen=True, slots=True)
class UsageFilter:
    """Which calls: in [since, until), of a workspace's agents (`agent_prefix` is
    `workspace/`), of one agent with its children (`agent_family`), of one payer."""

    since: float
    until: float | None = None
    agent_prefix: str | None = None
    agent_family: str | None = None
    payer: str | None = None

    @property
    def whole_quarters(self) -> bool:
        return all(t is None or t % QUARTER_S == 0 for t in (self.since, self.until))

    def where(self, at: str = "at") -> tuple[str, list[Any]]:
        clauses, params = [f"{at} >= ?"], list[Any]([self.since])
        if self.until is not None:
            clauses.append(f"{at} < ?")
            params.append(self.until)
        if self.agent_prefix is not None:
            # A range, not LIKE: an id may hold `_`, which LIKE takes for a wildcard.
            clauses.append("agent_id >= ? AND agent_id < ?")
            prefix = self.agent_prefix
            params += [prefix, prefix[:-1] + chr(ord(prefix[-1]) + 1)]
        if self.agent_family is not None:
            family = self.agent_family
            clauses.append("(agent_id = ? OR (agent_id >= ? AND agent_id < ?))")
            params += [family, family + "/", family + "0"]  # "0" follows "/"
        if self.payer is not None:
            clauses.append("payer = ?")
            params.append(self.payer)
        return " AND ".join(clauses), params


def _spend(r: Row) -> Spend:
    usage = Usage(
        int(r["input_tokens"]),
        int(r["output_tokens"]),
        int(r["cache_read_tokens"]),
        int(r["cache_write_tokens"]),
    )
    return Spend(usage, float(r["cost_usd"]), int(r["calls"]))


def total_sql(which: UsageFilter) -> tuple[str, list[Any]]:
    """The sum of `which`: from the quarters' sums when it spans whole quarters."""
    if which.whole_quarters:
        where, params = which.where("quarter")
        return f"SELECT {QUARTER_SUMS} FROM model_usage_quarters WHERE {where}", params
    where, params = which.where()
    return f"SELECT {SUMS} FROM model_usage WHERE {where}", params


TOKENS = "input_tokens + output_tokens + cache_read_tokens + cache_write_tokens"


def spent_sql(which: UsageFilter, dollars: bool) -> tuple[str, list[Any]]:
    """One number, what `which` spent: dollars, or tokens (in, cached or not, and out); a
    subquery of a budget's check (bridge/store/spend.py)."""
    column = "cost_usd" if dollars else TOKENS
    table, at = (
        ("model_usage_quarters", "quarter") if which.whole_quarters else ("model_usage", "at")
    )
    where, params = which.where(at)
    return f"SELECT COALESCE(SUM({column}), 0) FROM {table} WHERE {where}", params


class UsageLedger:
    def __init__(self, rows: Callable[[str, Sequence[Any]], Awaitable[list[Row]]]) -> None:
        self._rows = rows

    async def total(self, which: UsageFilter) -> Spend:
        [row] = await self._rows(*total_sql(which))
        return _spend(row)

    async def grouped(
        self, which: UsageFilter, by: GroupBy, limit: int | None = None
    ) -> list[tuple[str | None, Spend]]:
        """Sums per `by` (an agent, a payer, a model, a provider, a session, a purpose), the
        costliest first, then the most tokens. Calls recorded before providers were (runtime
        migration 13) have the provider None."""
        where, params = which.where()
        sql = (
            f"SELECT {by} AS key, {SUMS} FROM model_usage WHERE {where} GROUP BY {by}"
            # by tokens where the cost ties (a model without a price costs 0)
            f" ORDER BY cost_usd DESC, SUM(input_tokens + output_tokens) DESC, key"
            f"{' LIMIT ?' if limit else ''}"
        )
        found = await self._rows(sql, [*params, limit] if limit else params)
        return [(r["key"], _spend(r)) for r in found]

    async def by_agent_and_model(self) -> list[tuple[str, str, Spend]]:
        """Every call ever, summed per agent and model: what the Prometheus counters show."""
        sql = (
            f"SELECT agent_id, model, {QUARTER_SUMS} FROM model_usage_quarters"
            " GROUP BY agent_id, model ORDER BY agent_id, model"
        )
        return [(r["agent_id"], r["model"], _spend(r)) for r in await self._rows(sql, ())]


def record(w: Writer, r: UsageRecord) -> None:
    u = r.usage
    w.write_sql(
        "INSERT INTO model_usage (at, session_id, run_id, agent_id, payer, model, provider,"
        " purpose, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd,"
        " priced) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            r.at,
            r.charge.session_id,
            r.charge.run_id,
            r.charge.agent_id,
            r.charge.payer,
            r.model,
            r.provider,
            r.purpose,
            u.input_tokens,
            u.output_tokens,
            u.cache_read_tokens,
            u.cache_write_tokens,
            r.cost_usd,
            r.priced,
        ),
    )
    w.write_sql(
        "INSERT INTO model_usage_quarters (quarter, agent_id, payer, model, input_tokens,"
        " output_tokens, cache_read_tokens, cache_write_tokens, cost_usd, calls)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1)"
        " ON CONFLICT (quarter, agent_id, payer, model) DO UPDATE SET"
        " input_tokens = model_usage_quarters.input_tokens + excluded.input_tokens,"
        " output_tokens = model_usage_quarters.output_tokens + excluded.output_tokens,"
        " cache_read_tokens = model_usage_quarters.cache_read_tokens + excluded.cache_read_tokens,"
        " cache_write_tokens ="
        " model_usage_quarters.cache_write_tokens + excluded.cache_write_tokens,"
        " cost_usd = model_usage_quarters.cost_usd + excluded.cost_usd,"
        " calls = model_usage_quarters.calls + 1",
        (
            quarter_of(r.at),
            r.charge.agent_id,
            r.charge.payer or NOBODY,
            r.model,
            u.input_tokens,
            u.output_tokens,
            u.cache_read_tokens,
            u.cache_write_tokens,
            r.cost_usd,
        ),
    )


def record_call(
    w: Writer,
    prices: PriceTable,
    charge: Charge,
    model: str,
    purpose: CallPurpose,
    usage: Usage,
    provider: str | None = None,
) -> None:
    """A model call's usage and cost (the price of `model` on the platform its name says),
    charged to `charge`, in `w`'s transaction; `provider`: the connection that answered
    (`ProviderResponse.provider`)."""
    cost, priced = cost_of(prices, model, usage)
    record(w, UsageRecord(w.now(), charge, model, purpose, usage, cost, priced, provider))


# Records a call's usage: the model and the provider (its config name) that answered, tokens.
Bill = Callable[[Writer, str, str | None, Usage], None]


def bill_of(prices: PriceTable, charge: Charge, purpose: CallPurpose) -> Bill:
    """Records calls of `purpose` charged to `charge` (`record_call`); a provider that does
    not say its name is the runtime's own (`DEFAULT_PROVIDER`)."""

    def bill(w: Writer, model: str, provider: str | None, usage: Usage) -> None:
        record_call(w, prices, charge, model, purpose, usage, provider or DEFAULT_PROVIDER)

    return bill
