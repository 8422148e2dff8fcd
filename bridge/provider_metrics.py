"""The Prometheus series of each agent's provider chain (issue 41): each candidate's state,
when it is back, the switches between candidates and the sessions on a fallback. Read from
the runtime's chains at scrape time (`refresh`), as bridge/provider_health.py reads them for
/status and the console.

Labels name an agent by its runtime id ("<workspace>/<agent>") and a candidate by its label
("name:model"): never a key."""

from __future__ import annotations

import math
from collections.abc import Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from bridge.provider_health import ChainRow
from runtime.providers.cooldowns import State


class ProviderCollector(Collector):
    def __init__(self) -> None:
        self._chains: list[ChainRow] = []
        self._now = 0.0

    def refresh(self, chains: list[ChainRow], now: float) -> None:
        """The chains as they stand at `now` (wall time): what the next collect shows."""
        self._chains, self._now = chains, now

    def collect(self) -> Iterator[Metric]:
        state = GaugeMetricFamily(
            "switchboard_provider_state",
            "Each candidate of each agent's provider chain: 1 for the state it is in (ready, "
            "cooling: rate limited, open: overloaded or unreachable, half_open: due a probe, "
            "held: billing or quota, disabled: its key refused), 0 for the others.",
            labels=("agent", "candidate", "state"),
        )
        back_in = GaugeMetricFamily(
            "switchboard_provider_back_in_seconds",
            "Seconds until the candidate takes requests again by itself: 0 when it does now, "
            "+Inf when only a config reload brings it back (its key refused).",
            labels=("candidate",),
        )
        switches = CounterMetricFamily(
            "switchboard_provider_switches",
            "Sessions moved from one candidate of their agent's chain to another, by why "
            "(the failure or state that moved them, cost, or recovered: back after a probe).",
            labels=("agent", "from", "to", "why"),
        )
        on_fallback = GaugeMetricFamily(
            "switchboard_sessions_on_fallback",
            "Sessions whose turns go to a candidate other than their agent's first, by "
            "candidate (0 for each fallback no session is on).",
            labels=("agent", "candidate"),
        )
        seen: set[str] = set()
        for chain in self._chains:
            for c in chain.candidates:
                for s in State:
                    state.add_metric([chain.agent_id, c.label, s.value], float(c.state is s))
                if not c.primary:
                    on_fallback.add_metric([chain.agent_id, c.label], c.sessions)
                if c.label not in seen:  # chains share a candidate's health
                    seen.add(c.label)
                    back_in.add_metric([c.label], self._back_in(c.state, c.until))
            for (source, target, why), n in sorted(chain.switches.items()):
                switches.add_metric([chain.agent_id, source, target, why], n)
        yield from (state, back_in, switches, on_fallback)

    def _back_in(self, state: State, until: float | None) -> float:
        if state is State.DISABLED:
            return math.inf
        return 0.0 if until is None else max(0.0, round(until - self._now, 3))
