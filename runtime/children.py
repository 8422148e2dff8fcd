"""Child agents: spawning a private child for a task, and its result going back to its parent
as a `task_result` message."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from runtime.events import Event
from runtime.host import Host
from runtime.messages import InboundMessage, MessageKind, Origin, Priority, Provenance, Trust
from runtime.payloads import ChildSpawned
from runtime.records import AgentProfile
from runtime.session import Session
from runtime.tools.envelope import ToolResult
from runtime.turn_types import TurnOutcome


class Spawning:
    """The children being created, by parent: two `spawn_agent` calls of one round run side
    by side, and each must get a number of its own."""

    def __init__(self) -> None:
        self._starting: dict[str, int] = {}

    @contextmanager
    def number(self, parent_id: str, existing: int) -> Iterator[int]:
        """The next child's number, counting the `existing` ones and those being created."""
        starting = self._starting.get(parent_id, 0)
        self._starting[parent_id] = starting + 1
        try:
            yield existing + starting + 1
        finally:
            left = self._starting.pop(parent_id) - 1
            if left:
                self._starting[parent_id] = left


async def report_to_parent(
    host: Host, child: Session, run_id: str, outcome: TurnOutcome, payer: str | None = None
) -> None:
    text = outcome.final_text or f"(the task ended {outcome.status}: {outcome.error})"
    await host.submit(
        child.record.parent_session_id or "",
        InboundMessage(
            text=text,
            kind=MessageKind.TASK_RESULT,
            origin=Origin.TASK,
            trust=Trust.TRUSTED_SYSTEM,
            priority=Priority.NEXT,
            provenance=Provenance(
                sender=child.record.agent_id, causation_id=run_id, charged_to=payer
            ),
        ),
    )


async def spawn_child(host: Host, parent: Session, run_id: str, task: str) -> ToolResult:
    if not task.strip():
        return ToolResult.failure("invalid_input", "spawn_agent needs a non-empty task")
    if parent.record.profile is AgentProfile.PRIVATE_CHILD:
        return ToolResult.failure("not_allowed", "a child agent cannot spawn agents")
    child = await host.create_child_session(parent, run_id)
    child_agent = child.record.agent_id
    await host.store.emit(
        Event(
            ChildSpawned(child_session_id=child.id, child_agent_id=child_agent, task=task),
            parent.id,
            run_id,
        )
    )
    await host.submit(
        child.id,
        InboundMessage(
            text=task,
            kind=MessageKind.TASK_REQUEST,
            origin=Origin.SYSTEM,
            trust=Trust.TRUSTED_SYSTEM,
            priority=Priority.NORMAL,
            provenance=Provenance(
                sender=parent.record.agent_id,
                causation_id=run_id,
                charged_to=parent.running.payer if parent.running else None,
            ),
        ),
    )
    return ToolResult.success(
        f"started child agent {child_agent}; its result will come back as a message",
        {"child_session_id": child.id, "child_agent_id": child_agent},
    )
