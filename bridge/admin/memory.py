"""The console's Memory page of one agent (issue 40): every memory it keeps, of every scope
(its admin's view, where the chat's /memory shows only what that chat may see), each with
where it came from; a search; Forget, recorded in the audit of admin actions; and the whole
memory as JSON, its text masked of the process's secrets as every page is."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from bridge.admin.errors import NotInWorkspace
from bridge.admin.words import by_admin
from bridge.events import AdminActionKind
from bridge.service import Bridge
from bridge.sessions import agent_key
from bridge.store.records import AdminActionRecord
from config.schema import WorkspaceConfig
from runtime.memory_values import Memory

SHOWN = 100  # memories on the page, newest (or, searched, best) first


@dataclass(frozen=True, slots=True)
class MemoryBoard:
    agent: str  # the agent's id in its workspace
    query: str
    memories: list[Memory]


def _agent_id(workspace: WorkspaceConfig, agent: str) -> str:
    """The runtime's id of the workspace's agent; another workspace's, or none, is a 404."""
    if agent not in {a.id for a in workspace.agents}:
        known = ", ".join(a.id for a in workspace.agents)
        raise NotInWorkspace(f"no agent {agent!r} here (agents: {known})")
    return agent_key(workspace.id, agent)


async def read_memory(
    bridge: Bridge, workspace: WorkspaceConfig, agent: str, query: str = ""
) -> MemoryBoard:
    query = query.strip()
    memories = await bridge.runtime.memories.of_agent(
        _agent_id(workspace, agent), query or None, SHOWN
    )
    return MemoryBoard(agent, query, memories)


async def export_memory(
    bridge: Bridge, workspace: WorkspaceConfig, agent: str
) -> list[dict[str, Any]]:
    """Every memory of the agent, oldest first, as JSON objects."""
    kept = await bridge.runtime.memories.export(_agent_id(workspace, agent))
    return [_exported(bridge, m) for m in kept]


def _exported(bridge: Bridge, m: Memory) -> dict[str, Any]:
    return {
        "id": m.id,
        "scope": m.scope.value,
        "operator_id": m.operator_id,
        "text": bridge.secrets.mask(m.text),
        "created_at": datetime.fromtimestamp(m.created_at, UTC).isoformat(),
        "source": m.source.value,
        "session_id": m.session_id,
        "message_id": m.message_id,
        "supersedes": m.supersedes,
    }


async def forget_memory(
    bridge: Bridge, workspace: WorkspaceConfig, agent: str, memory_id: str, admin: str
) -> str:
    """Forget one memory of the agent, of any scope, the admin named as who (the runtime keeps
    a tombstone); recorded, without its text, in the audit of admin actions."""
    gone = await bridge.runtime.memories.forget_for_admin(
        _agent_id(workspace, agent), memory_id, by_admin(admin)
    )
    if gone is None:
        raise NotInWorkspace(f"agent {agent} keeps no memory {memory_id!r}")
    owner = f" of operator {gone.operator_id}" if gone.operator_id else ""
    detail = f"{agent}: a {gone.scope.value} memory{owner}, from {gone.source.value}"
    async with bridge.store.write() as tx:
        tx.admin_action(
            AdminActionRecord(
                workspace.id, admin, AdminActionKind.FORGET_MEMORY, gone.id, None, detail
            )
        )
    return f"Memory {gone.id} of {agent} is forgotten: no conversation recalls it any more."
