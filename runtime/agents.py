"""Agent definitions as the runtime sees them (the bridge maps the admin's config to these)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from runtime.memory_values import MemoryLimits
from runtime.records import AgentProfile
from runtime.tools.builtins import CHILD_BUILTINS
from runtime.tools.memory import CHILD_MEMORY_TOOLS, MEMORY_TOOLS

CHILD_INSTRUCTIONS = (
    "You are a private child agent started by another agent for one task. Work on the task "
    "with your tools, then answer with the result: your final answer goes back to the agent "
    "that started you. Use notify_operator only when a human must know something now."
)


@dataclass(frozen=True, slots=True)
class WakeupLimits:
    """What `schedule_wakeup` may ask for (the workspace's `[workspaces.wakeups]`): one pending
    per session always; not sooner than `min_delay_s`; at most `per_day` in any 24 hours."""

    min_delay_s: float = 10.0
    per_day: int = 200


@dataclass(frozen=True, slots=True)
class AgentSpec:
    id: str
    system_prompt: str = ""
    tools: tuple[str, ...] = ("notify_operator", "sleep", "spawn_agent")
    profile: AgentProfile = AgentProfile.DEFAULT
    wakeups: WakeupLimits = WakeupLimits()
    # Whose memories it keeps and is offered: its own id, or a child's root agent's (the child
    # reads them: `recall` only). None: it keeps none (`[workspaces.memory] enabled = false`).
    memory: str | None = None
    memory_limits: MemoryLimits = field(default_factory=MemoryLimits)  # as their owner
    # Whose provider chain its turns use (runtime/models.py): its own id, or a
    # child's root agent's. None: the runtime's default provider.
    chain: str | None = None

    @property
    def offered_tools(self) -> tuple[str, ...]:
        """Its tools, and the memory tools where it keeps memories."""
        if self.memory is None:
            return self.tools
        child = self.profile is AgentProfile.PRIVATE_CHILD
        kept = CHILD_MEMORY_TOOLS if child else tuple(MEMORY_TOOLS)
        return self.tools + tuple(t for t in kept if t not in self.tools)

    def child(self, child_id: str, command_tools: list[str]) -> AgentSpec:
        """A private child: notify and sleep, plus this agent's command tools and MCP tools
        (`server.tool`, `server.*`); no spawn. It reads this agent's memories (`recall`)."""
        own_commands = tuple(t for t in self.tools if t in command_tools or "." in t)
        prompt = f"{self.system_prompt}\n\n{CHILD_INSTRUCTIONS}".strip()
        return AgentSpec(
            child_id,
            prompt,
            CHILD_BUILTINS + own_commands,
            AgentProfile.PRIVATE_CHILD,
            memory=self.memory,
            chain=self.chain,
        )


def limits_by_owner(agents: Iterable[AgentSpec]) -> dict[str, MemoryLimits]:
    """Each agent's memory limits, by the agent whose memories they are (not a child)."""
    return {a.id: a.memory_limits for a in agents if a.memory == a.id}
