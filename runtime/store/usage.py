"""Model usage (`store.usage` reads it): one row per model call, written with its round by
`record`; read back summed, by period and by who was charged. Rows are never pruned: they
are small, and the totals they sum must stay exact."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from config.prices import PriceTable
from runtime.ids import new_id
from runtime.providers.base import Usage
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

GroupBy = Literal["agent_id", "payer", "model", "session_id"]


@dataclass(frozen=True, slots=True)
class UsageFilter:
    """Which calls: in [since, until), of a workspace's agents (`agent_prefix` is
    `workspace/`), of one agent with its children (`agent_family`), of one payer."""

    since: float
    until: float | None = None
    agent_prefix: str | None = None
    agent_family: str | None = None
    payer: str | None = None

    def where(self) -> tuple[str, list[Any]]:
        clauses, params = ["at >= ?"], list[Any]([self.since])
        if self.until is not None:
            clauses.append("at < ?")
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


class UsageLedger:
    def __init__(self, rows: Callable[[str, Sequence[Any]], Awaitable[list[Row]]]) -> None:
        self._rows = rows

    async def total(self, which: UsageFilter) -> Spend:
        where, params = which.where()
        [row] = await self._rows(f"SELECT {SUMS} FROM model_usage WHERE {where}", params)
        return _spend(row)

    async def grouped(
        self, which: UsageFilter, by: GroupBy, limit: int | None = None
    ) -> list[tuple[str | None, Spend]]:
        """Sums per `by` (an agent, a payer, a model, a session), the costliest first."""
        where, params = which.where()
        sql = (
            f"SELECT {by} AS key, {SUMS} FROM model_usage WHERE {where} GROUP BY {by}"
            f" ORDER BY cost_usd DESC, key{' LIMIT ?' if limit else ''}"
        )
        found = await self._rows(sql, [*params, limit] if limit else params)
        return [(r["key"], _spend(r)) for r in found]

    async def by_agent_and_model(self) -> list[tuple[str, str, Spend]]:
        """Every call ever, summed per agent and model: what the Prometheus counters show."""
        sql = (
            f"SELECT agent_id, model, {SUMS} FROM model_usage GROUP BY agent_id, model"
            " ORDER BY agent_id, model"
        )
        return [(r["agent_id"], r["model"], _spend(r)) for r in await self._rows(sql, ())]

    async def of_run(self, run_id: str) -> Spend:
        sql = f"SELECT {SUMS} FROM model_usage WHERE run_id = ?"
        [row] = await self._rows(sql, (run_id,))
        return _spend(row)


def record(w: Writer, r: UsageRecord) -> None:
    u = r.usage
    w.write_sql(
        "INSERT INTO model_usage (id, at, session_id, run_id, agent_id, payer, model, purpose,"
        " input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd, priced)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            r.id,
            r.at,
            r.charge.session_id,
            r.charge.run_id,
            r.charge.agent_id,
            r.charge.payer,
            r.model,
            r.purpose,
            u.input_tokens,
            u.output_tokens,
            u.cache_read_tokens,
            u.cache_write_tokens,
            r.cost_usd,
            r.priced,
        ),
    )


def record_call(
    w: Writer, prices: PriceTable, charge: Charge, model: str, purpose: CallPurpose, usage: Usage
) -> None:
    """A model call's usage and cost, charged to `charge`, in `w`'s transaction."""
    cost, priced = cost_of(prices, model, usage)
    record(w, UsageRecord(new_id("use"), w.now(), charge, model, purpose, usage, cost, priced))
