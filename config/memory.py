"""`[workspaces.memory]`: whether the workspace's agents keep memories across sessions (issue
40). On, each agent is offered `remember`, `recall` and `forget`, and the memories relevant
to a turn's first message are offered at the start of that turn."""

from __future__ import annotations

from pydantic import Field

from config.strict import Strict

# Offered by `enabled` alone (no agent lists them); a defined tool may not take these names.
MEMORY_TOOLS = ("remember", "recall", "forget")


class MemoryConfig(Strict):
    enabled: bool = True
    # How many memories each agent keeps of the whole workspace's, and of each operator's
    # own; keeping one more removes the least used and oldest, and the primary operator is told.
    agent_limit: int = Field(10_000, ge=1, le=1_000_000)
    operator_limit: int = Field(1_000, ge=1, le=1_000_000)
