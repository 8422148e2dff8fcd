"""`[workspaces.memory]`: whether the workspace's agents keep memories across sessions (issue
40). On, each agent is offered `remember`, `recall` and `forget`, and the memories relevant
to a turn's first message are offered at the start of that turn."""

from __future__ import annotations

from config.strict import Strict

# Offered by `enabled` alone (no agent lists them); a defined tool may not take these names.
MEMORY_TOOLS = ("remember", "recall", "forget")


class MemoryConfig(Strict):
    enabled: bool = True
