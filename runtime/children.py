"""Tool effects that reach beyond the turn: notifying an operator, spawning a private child,
and a child's result going back to its parent as a `task_result` message."""

from __future__ import annotations

from typing import TYPE_CHECKING

from runtime.events import Event, EventType
from runtime.messages import InboundMessage, MessageKind, Origin, Priority, Provenance, Trust
from runtime.notifications import notify_operator
from runtime.records import AgentProfile
from runtime.session import Session
from runtime.tools.envelope import ToolResult

if TYPE_CHECKING:
    from runtime.engine import Runtime
    from runtime.turn import TurnOutcome


async def report_to_parent(rt: Runtime, child: Session, run_id: str, outcome: TurnOutcome) -> None:
    text = outcome.final_text or f"(the task ended {outcome.status}: {outcome.error})"
    await rt.submit(
        child.record.parent_session_id or "",
        InboundMessage(
            text=text,
            kind=MessageKind.TASK_RESULT,
            origin=Origin.TASK,
            trust=Trust.TRUSTED_SYSTEM,
            priority=Priority.NEXT,
            provenance=Provenance(sender=child.record.agent_id, causation_id=run_id),
        ),
    )


async def notify(rt: Runtime, session: Session, run_id: str, message: str) -> ToolResult:
    parent_id = session.record.parent_session_id
    parent = rt.sessions.get(parent_id) if parent_id else None
    return await notify_operator(rt.store, session, parent, run_id, message)


async def spawn_child(rt: Runtime, parent: Session, run_id: str, task: str) -> ToolResult:
    if not task.strip():
        return ToolResult.failure("invalid_input", "spawn_agent needs a non-empty task")
    if parent.record.profile is AgentProfile.PRIVATE_CHILD:
        return ToolResult.failure("not_allowed", "a child agent cannot spawn agents")
    number = len(rt.children(parent)) + 1
    child_agent = f"{parent.record.agent_id}/child-{number}"
    rt.agents[child_agent] = rt.agents[parent.record.agent_id].child(
        child_agent, rt.tools.command_tool_names()
    )
    child_id = await rt.create_session(
        child_agent, parent_session_id=parent.id, metadata={"spawned_by_run": run_id}
    )
    async with rt.store.write() as w:
        w.emit(
            Event(
                EventType.CHILD_SPAWNED,
                parent.id,
                {"child_session_id": child_id, "child_agent_id": child_agent, "task": task},
                run_id=run_id,
            )
        )
    await rt.submit(
        child_id,
        InboundMessage(
            text=task,
            kind=MessageKind.TASK_REQUEST,
            origin=Origin.SYSTEM,
            trust=Trust.TRUSTED_SYSTEM,
            priority=Priority.NORMAL,
            provenance=Provenance(sender=parent.record.agent_id, causation_id=run_id),
        ),
    )
    return ToolResult.success(
        f"started child agent {child_agent}; its result will come back as a message",
        {"child_session_id": child_id, "child_agent_id": child_agent},
    )
