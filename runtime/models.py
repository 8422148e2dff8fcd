"""Which provider a turn calls (issue 41): its agent's chain (the config's provider, model and
fallback, runtime/providers/fallback.py), or the runtime's default provider.

`for_turn` is asked once at a turn's start, the one point a session that fell back may return
to a better candidate (after a probe); the Provider it answers is the turn's for all its
rounds, its compaction and its memory flush. A turn started by a clock (a schedule, a
wake-up) falls back only to candidates no dearer than its agent's first.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import replace

from runtime.agents import AgentSpec
from runtime.context import Budget
from runtime.payloads import FallbackStanding
from runtime.providers.base import Provider
from runtime.providers.fallback import Chain, ChainSnapshot

log = logging.getLogger(__name__)


class Models:
    def __init__(self, default: Provider, chains: Mapping[str, Chain] | None = None) -> None:
        self.default = default
        self.chains = dict(chains or {})  # by AgentSpec.chain

    def _chain(self, agent: AgentSpec | None) -> Chain | None:
        return self.chains.get(agent.chain) if agent is not None and agent.chain else None

    async def for_turn(
        self, agent: AgentSpec, session_id: str, *, cheaper_only: bool = False
    ) -> Provider:
        """The provider of a turn of `agent` in `session_id` starting now."""
        chain = self._chain(agent)
        if chain is None:
            return self.default
        try:
            await chain.turn_starts(session_id, cheaper_only=cheaper_only)
        except Exception:  # a probe that broke: the turn goes on where the session is
            log.exception("provider probe failed", extra={"session_id": session_id})
        return chain.for_session(session_id, cheaper_only=cheaper_only)

    def budget(self, agent: AgentSpec | None, budget: Budget) -> Budget:
        """`budget` (the default provider's) for a turn of `agent`: within the smallest
        context window of its chain's models, so a fallback never gets a request too long."""
        chain = self._chain(agent)
        if chain is None or chain.window is None:
            return budget
        return replace(budget, window=chain.window)

    def between_turns(self, agent: AgentSpec | None, session_id: str) -> Provider:
        """The provider of work on an idle session (/compact, /new's flush): where the
        session is now, without a probe."""
        chain = self._chain(agent)
        return self.default if chain is None else chain.for_session(session_id)

    def forget(self, session_id: str) -> None:
        """The session is left (/new): where it stood in its fallback goes with it."""
        for chain in self.chains.values():
            chain.forget(session_id)

    def reset(self) -> None:
        """A config reload: every candidate is tried afresh (a refused key again too)."""
        for chain in self.chains.values():
            chain.health.reset()

    def standing(self, agent: AgentSpec | None, session_id: str) -> FallbackStanding | None:
        """Where the session stands in its agent's chain when off its first candidate."""
        chain = self._chain(agent)
        current = chain.current(session_id) if chain is not None else None
        if chain is None or current is None or current == chain.primary:
            return None
        health = chain.health.health(chain.primary)
        return FallbackStanding(
            current=current.label,
            primary=chain.primary.label,
            state=health.state,
            until=health.until,
            failure=health.last_failure,
        )

    def snapshot(self) -> dict[str, ChainSnapshot]:
        """Each chain's candidates and sessions, by chain (for /status, console, /metrics)."""
        return {name: chain.snapshot() for name, chain in self.chains.items()}

    async def close(self) -> None:
        """Close every provider once (chains may share one)."""
        providers = {id(self.default): self.default}
        for chain in self.chains.values():
            providers.update({id(c.provider): c.provider for c in chain.candidates})
        for provider in providers.values():
            await provider.close()
