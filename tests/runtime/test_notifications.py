"""notify_operator for a default agent and a private child; spawn_agent round trip."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from runtime.events import EventType
from runtime.messages import MessageKind, QueueStatus
from runtime.notifications import summarize
from runtime.prompts import TASK_RESULT_HEADER
from runtime.records import OperatorBoundary
from tests.fakes.anthropic_api import FakeAnthropic, Reply, text, tools
from tests.runtime.helpers import all_events, open_runtime, operator


def test_summary_is_first_non_empty_line_trimmed_to_160() -> None:
    assert summarize("\n\n   disk almost full  \nsecond line") == "disk almost full"
    assert summarize("x" * 400) == "x" * 160


async def test_default_agent_notification_is_recorded_and_not_terminal(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    anthropic_api.script = [
        tools(("notify_operator", {"message": "\n  Deploy needs approval  \nDetails follow."})),
        text("I told the operator and carried on."),
    ]
    rt = await open_runtime(db_path, anthropic_api)
    cleanup.append(rt)
    sid = await rt.create_session("assistant")
    await rt.submit(sid, operator("deploy"))
    await rt.wait_idle()

    [record] = await rt.store.notifications()
    assert record.agent_id == record.requested_by_agent_id == "assistant"
    assert record.target_operator_boundary is OperatorBoundary.PRIMARY_OPERATOR
    assert record.summary == "Deploy needs approval"
    assert record.session_id == sid
    [event] = await all_events(rt, EventType.OPERATOR_NOTIFICATION_REQUESTED)
    assert set(event.data.model_dump()) >= {
        "notification_id",
        "agent_id",
        "requested_by_agent_id",
        "target_operator_boundary",
        "message",
        "summary",
        "created_at",
    }
    assert len(anthropic_api.requests) == 2, "the turn went on after notifying"
    [run] = await rt.store.runs(session_id=sid)
    assert run.final_text == "I told the operator and carried on."


async def test_empty_notification_is_refused_without_a_record(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    anthropic_api.script = [tools(("notify_operator", {"message": "   \n "})), text("hm")]
    rt = await open_runtime(db_path, anthropic_api)
    cleanup.append(rt)
    sid = await rt.create_session("assistant")
    await rt.submit(sid, operator("go"))
    await rt.wait_idle()
    assert await rt.store.notifications() == []
    result = anthropic_api.requests[1]["messages"][2]["content"][0]
    assert result["is_error"] is True and "non-empty message" in result["content"]


async def test_private_child_notifies_through_its_parent_and_reports_back(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    child_steps = [
        tools(("notify_operator", {"message": "Child needs a human"})),
        text("child result: 42"),
    ]

    def respond(body: dict[str, Any]) -> Reply:
        if "private child agent" in str(body.get("system", "")):
            offered = {t["name"] for t in body.get("tools", [])}
            assert "spawn_agent" not in offered and "notify_operator" in offered
            return child_steps.pop(0)
        last = body["messages"][-1]["content"][-1]
        if last.get("type") == "text" and last["text"].startswith(TASK_RESULT_HEADER):
            return text("parent saw the child's result")
        return text("parent waiting")

    anthropic_api.script = [tools(("spawn_agent", {"task": "compute the answer"}))]
    anthropic_api.responder = respond
    rt = await open_runtime(db_path, anthropic_api)
    cleanup.append(rt)
    sid = await rt.create_session("assistant")
    await rt.submit(sid, operator("delegate it"))
    await rt.wait_idle()

    [record] = await rt.store.notifications()
    assert record.agent_id == "assistant"
    assert record.requested_by_agent_id == "assistant/child-1"
    assert record.target_operator_boundary is OperatorBoundary.PARENT_SUPERVISOR
    assert record.session_id == sid, "delivered through the parent's session"
    assert record.requested_by_session_id != sid

    task_results = [
        m
        for m in await rt.store.messages(session_id=sid)
        if m.message.kind is MessageKind.TASK_RESULT
    ]
    assert [m.message.text for m in task_results] == ["child result: 42"]
    assert task_results[0].status is QueueStatus.PROCESSED
    runs = await rt.store.runs(session_id=sid)
    assert runs[-1].final_text == "parent saw the child's result"
    assert rt.status(sid).children == (record.requested_by_session_id,)
    assert anthropic_api.refused == []
