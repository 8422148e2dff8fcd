"""The Prometheus counters of model usage: tokens and dollars by workspace, agent and model.

Their truth is the store's usage rows (never pruned), summed at scrape time, so every
replica and every restart shows the same totals, equal to the store's to the token. A
private child's calls count as its agent's."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from prometheus_client.core import CounterMetricFamily, Metric
from prometheus_client.registry import Collector

from runtime.spend import Spend
from runtime.store.usage import UsageLedger

Labels = tuple[str, str, str]  # workspace, agent, model


class UsageCollector(Collector):
    def __init__(self) -> None:
        self._sums: dict[Labels, Spend] = {}

    async def refresh(self, ledger: UsageLedger) -> None:
        sums: dict[Labels, Spend] = defaultdict(Spend)
        for agent_id, model, spend in await ledger.by_agent_and_model():
            workspace, _, agent = agent_id.partition("/")
            key = (workspace, agent.split("/")[0], model)
            sums[key] += spend
        self._sums = dict(sums)

    def collect(self) -> Iterator[Metric]:
        tokens = CounterMetricFamily(
            "switchboard_model_tokens",
            "Tokens of model calls as the provider counted them, by workspace, agent, model "
            "and kind (input, output, cache_read, cache_write).",
            labels=("workspace", "agent", "model", "kind"),
        )
        cost = CounterMetricFamily(
            "switchboard_model_cost_usd",
            "Dollars model calls cost at the configured prices, by workspace, agent and model.",
            labels=("workspace", "agent", "model"),
        )
        calls = CounterMetricFamily(
            "switchboard_model_calls",
            "Model calls made, by workspace, agent and model.",
            labels=("workspace", "agent", "model"),
        )
        for (workspace, agent, model), s in sorted(self._sums.items()):
            u = s.usage
            for kind, n in (
                ("input", u.input_tokens),
                ("output", u.output_tokens),
                ("cache_read", u.cache_read_tokens),
                ("cache_write", u.cache_write_tokens),
            ):
                tokens.add_metric([workspace, agent, model, kind], n)
            cost.add_metric([workspace, agent, model], s.cost_usd)
            calls.add_metric([workspace, agent, model], s.calls)
        yield from (tokens, cost, calls)
