"""The console's Providers page: each agent of a workspace with its ordered chain (each
candidate's state, until when in the workspace's time, its last failure, the sessions on
it), and the agents that use the default provider alone."""

from __future__ import annotations

from dataclasses import dataclass

from bridge.activity import agent_name
from bridge.provider_health import ChainRow, chains, until_words
from bridge.service import Bridge
from bridge.sessions import agent_key
from config.schema import WorkspaceConfig
from config.timing import zone
from runtime.providers.cooldowns import State

STATE_WORDS = {
    State.READY: "ready",
    State.COOLING: "cooling (rate limited)",
    State.OPEN: "open (overloaded or unreachable)",
    State.HALF_OPEN: "half open (due a probe)",
    State.HELD: "held (billing or quota)",
    State.DISABLED: "disabled (key refused; back on a config reload)",
}


@dataclass(frozen=True, slots=True)
class CandidateLine:
    label: str  # name:model
    primary: bool
    state: State
    state_words: str
    until: str  # "until 17:05 Europe/Paris (in 4 min)", or ""
    failure: str  # its last failure, or ""
    sessions: int


@dataclass(frozen=True, slots=True)
class AgentChain:
    agent: str  # as the config names it
    candidates: list[CandidateLine]
    switches: list[tuple[str, str, str, int]]  # from, to, why, how many


@dataclass(frozen=True, slots=True)
class ProvidersBoard:
    chains: list[AgentChain]
    default_model: str  # of the runtime's default provider
    on_default: list[str]  # agents with no chain of their own: the default provider alone


def read_providers(bridge: Bridge, workspace: WorkspaceConfig) -> ProvidersBoard:
    runtime = bridge.runtime
    tz, now = zone(workspace.timezone), runtime.clock.wall()

    def chain(row: ChainRow) -> AgentChain:
        lines = [
            CandidateLine(
                c.label,
                c.primary,
                c.state,
                STATE_WORDS[c.state],
                until_words(c.until, tz, now).strip(),
                bridge.secrets.mask(c.failure or ""),  # a provider's words may echo a key
                c.sessions,
            )
            for c in row.candidates
        ]
        switches = [(*k, n) for k, n in sorted(row.switches.items())]
        return AgentChain(agent_name(row.agent_id), lines, switches)

    rows = chains(runtime, workspace.id)
    with_chain = {row.agent_id for row in rows}
    on_default = [a.id for a in workspace.agents if agent_key(workspace.id, a.id) not in with_chain]
    return ProvidersBoard([chain(r) for r in rows], runtime.models.default.model, on_default)
