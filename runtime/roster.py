"""The configured agents after a reload: the admin's agents replaced, the private children
(derived from their parent when spawned) kept for the work they are doing."""

from __future__ import annotations

from collections.abc import Iterable

from runtime.agents import AgentSpec
from runtime.records import AgentProfile


def reconfigured(
    current: dict[str, AgentSpec], agents: Iterable[AgentSpec]
) -> dict[str, AgentSpec]:
    children = {k: a for k, a in current.items() if a.profile is AgentProfile.PRIVATE_CHILD}
    return {**children, **{a.id: a for a in agents}}
