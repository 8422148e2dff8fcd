"""Where each agent's provider chain stands (issue 41), read from the runtime's chains
(runtime/models.py) when asked: which candidate each session is on, each candidate's state,
until when and its last failure. `/status`, the console and /metrics say it from here.

A chain's snapshot lists only the sessions off its first candidate: those on it are the live
sessions of the agents (and their children) that use the chain, less those."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo

from bridge import texts
from bridge.approvals import duration
from runtime.engine import Runtime
from runtime.providers.cooldowns import State
from runtime.providers.fallback import ChainSnapshot

FAILURE_CHARS = 120  # the last failure, in a few words
SAME_DAY = "%H:%M"
OTHER_DAY = "%Y-%m-%d %H:%M"


@dataclass(frozen=True, slots=True)
class CandidateRow:
    label: str  # name:model, never a key
    primary: bool
    state: State
    until: float | None  # wall time its state ends by itself; None: it does not
    failure: str | None  # its last failure, in a few words
    sessions: int  # sessions on it now


@dataclass(frozen=True, slots=True)
class ChainRow:
    agent_id: str  # the runtime's "<workspace>/<agent>"
    candidates: list[CandidateRow]
    switches: dict[tuple[str, str, str], int]  # (from, to, why) -> how many


@dataclass(frozen=True, slots=True)
class OnFallback:
    """A session off its first candidate: the one it is on, and the first's health."""

    current: str
    primary: str
    state: State
    until: float | None
    failure: str | None  # the first's last failure, in full


def brief(failure: str | None) -> str | None:
    """A failure's message on one line, cut to a few words."""
    if not failure:
        return None
    text = " ".join(failure.split())
    return text if len(text) <= FAILURE_CHARS else text[: FAILURE_CHARS - 1] + "\u2026"


def when(until: float, tz: ZoneInfo, now: float) -> str:
    """A wall time in the workspace's zone, with its date when it is not today's."""
    local, today = datetime.fromtimestamp(until, tz), datetime.fromtimestamp(now, tz)
    shape = SAME_DAY if local.date() == today.date() else OTHER_DAY
    return f"{local:{shape}} {tz.key}"


def until_words(until: float | None, tz: ZoneInfo, now: float) -> str:
    """ " until 17:05 Europe/Paris (in 4 min 10 s)", or "" when the state has no end."""
    if until is None:
        return ""
    left = duration(max(0.0, until - now))
    return texts.PROVIDER_UNTIL.format(when=when(until, tz, now), left=left)


def on_fallback(runtime: Runtime, session_id: str) -> OnFallback | None:
    """Where the session's turns go when it is not its agent's first candidate; else None.
    On replicas, a session another one runs stands where its last turn there ended."""
    homes = runtime.homes
    if homes is not None and homes.lease(session_id) is None:
        heard = runtime.sessions[session_id].standing
        if heard is None:
            return None
        return OnFallback(
            heard.current, heard.primary, State(heard.state), heard.until, heard.failure
        )
    agent = runtime.agents.get(runtime.session(session_id).agent_id)
    chain = runtime.models.chains.get(agent.chain) if agent and agent.chain else None
    if chain is None:
        return None
    current = chain.current(session_id)
    if current == chain.primary:
        return None
    health = chain.health.health(chain.primary)
    return OnFallback(
        current.label, chain.primary.label, health.state, health.until, health.last_failure
    )


def fallback_line(found: OnFallback, tz: ZoneInfo, now: float) -> str:
    failure = brief(found.failure) if found.state is not State.READY else None
    return texts.STATUS_ON_FALLBACK.format(
        current=found.current,
        primary=found.primary,
        state=texts.PROVIDER_STATE_WORDS[found.state],
        until=until_words(found.until, tz, now),
        failure=texts.PROVIDER_FAILURE.format(failure=failure) if failure else "",
    )


def chains(runtime: Runtime, workspace_id: str | None = None) -> list[ChainRow]:
    """Each agent's chain (of `workspace_id`'s agents only, when given), by agent id."""
    prefix = f"{workspace_id}/" if workspace_id is not None else ""
    users = Counter(  # live sessions by the chain their agent uses
        agent.chain
        for session in runtime.sessions.values()
        if (agent := runtime.agents.get(session.record.agent_id)) is not None and agent.chain
    )
    snapshot = runtime.models.snapshot()
    return [
        _row(agent_id, snapshot[agent_id], users[agent_id])
        for agent_id in sorted(snapshot)
        if agent_id.startswith(prefix)
    ]


def _row(agent_id: str, snapshot: ChainSnapshot, users: int) -> ChainRow:
    off_primary = Counter(snapshot.sessions.values())
    on_primary = max(0, users - len(snapshot.sessions))
    rows = [
        CandidateRow(
            h.candidate.label,
            index == 0,
            h.state,
            h.until,
            brief(h.last_failure),
            on_primary if index == 0 else off_primary[h.candidate.label],
        )
        for index, h in enumerate(snapshot.candidates)
    ]
    return ChainRow(agent_id, rows, dict(snapshot.switches))
