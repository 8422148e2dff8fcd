"""Each safe point of DESIGN §2, through the real anthropic SDK against the fake API."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest

from runtime.boundaries import Boundary
from runtime.events import EventType
from runtime.messages import QueueEntry, QueueStatus
from runtime.prompts import INTERJECTION_HEADER
from runtime.records import RunStatus
from runtime.store.writer import Writer
from runtime.transcript import TranscriptMessage
from runtime.turn import Turn
from tests.fakes.anthropic_api import FakeAnthropic, text, tools
from tests.runtime.helpers import (
    all_events,
    blocking_tool,
    counting_tool,
    open_runtime,
    operator,
    request_roles,
    until,
    wait_for,
)


async def test_rfc_regression_interjection_before_tool_execution(
    anthropic_api: FakeAnthropic, db_path: Path, tmp_path: Path, cleanup: list[object]
) -> None:
    """A tool-only round; an operator prompt admitted at before_tool_execution; tools still run."""
    counter = tmp_path / "runs"
    hold = asyncio.Event()
    anthropic_api.script = [
        tools(("count", {}), hold=hold),
        text("All done."),
    ]
    rt = await open_runtime(db_path, anthropic_api, command_tools=[counting_tool("count", counter)])
    cleanup.append(rt)
    sid = await rt.create_session("assistant")
    await rt.submit(sid, operator("check the thing"))
    await until(lambda: len(anthropic_api.requests) == 1)
    result = await rt.submit(sid, operator("also look at the logs"))
    assert result.status == "waiting_for_safe_point"
    hold.set()
    await wait_for(rt, EventType.TURN_FINISHED)

    assert counter.read_text().splitlines() == ["run"], "the tool still ran, exactly once"
    [entry] = [m for m in await rt.store.messages(session_id=sid) if m.id == result.message_id]
    assert entry.status is QueueStatus.INTERJECTED
    assert entry.boundary == Boundary.BEFORE_TOOL_EXECUTION
    [admitted] = await all_events(rt, EventType.OPERATOR_INTERJECTION_ADMITTED)
    assert admitted.data.model_dump(mode="json") == {
        "message_id": result.message_id,
        "boundary": "before_tool_execution",
        "sender": "alice",
    }

    second = anthropic_api.requests[1]
    assert request_roles(second) == [
        ("user", ["text"]),
        ("assistant", ["tool_use"]),
        ("user", ["tool_result", "text"]),
    ]
    operator_text = second["messages"][2]["content"][1]["text"]
    assert operator_text.startswith(INTERJECTION_HEADER)
    assert "from alice" in operator_text and "also look at the logs" in operator_text
    assert anthropic_api.refused == []
    for body in anthropic_api.requests:
        for message in body["messages"]:
            assert message["content"], "no empty message is ever sent"
    [run] = await rt.store.runs(session_id=sid)
    assert run.status is RunStatus.COMPLETED and run.final_text == "All done."


async def test_after_provider_round_continues_the_turn(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    hold = asyncio.Event()
    anthropic_api.script = [text("Here is my answer.", hold=hold), text("Updated answer.")]
    rt = await open_runtime(db_path, anthropic_api)
    cleanup.append(rt)
    sid = await rt.create_session("assistant")
    await rt.submit(sid, operator("question"))
    await until(lambda: len(anthropic_api.requests) == 1)
    await rt.submit(sid, operator("actually, one more thing"))
    hold.set()
    finished = await wait_for(rt, EventType.TURN_FINISHED)

    assert finished.data.final_text == "Updated answer."
    [admitted] = await all_events(rt, EventType.OPERATOR_INTERJECTION_ADMITTED)
    assert admitted.data.boundary == "after_provider_round"
    assert request_roles(anthropic_api.requests[1]) == [
        ("user", ["text"]),
        ("assistant", ["text"]),
        ("user", ["text"]),
    ]
    assert len(await rt.store.runs(session_id=sid)) == 1, "one turn, one more round"


async def test_after_tool_results_appends_text_after_results(
    anthropic_api: FakeAnthropic, db_path: Path, tmp_path: Path, cleanup: list[object]
) -> None:
    gate, marker = tmp_path / "gate", tmp_path / "marker"
    anthropic_api.script = [tools(("wait", {})), text("finished")]
    rt = await open_runtime(
        db_path, anthropic_api, command_tools=[blocking_tool("wait", gate, marker)]
    )
    cleanup.append(rt)
    sid = await rt.create_session("assistant")
    await rt.submit(sid, operator("start"))
    await wait_for(rt, EventType.TOOL_STARTED)
    await rt.submit(sid, operator("while the tool runs"))
    gate.touch()
    await wait_for(rt, EventType.TURN_FINISHED)

    [admitted] = await all_events(rt, EventType.OPERATOR_INTERJECTION_ADMITTED)
    assert admitted.data.boundary == "after_tool_results"
    messages = anthropic_api.requests[1]["messages"]
    assert [b["type"] for b in messages[2]["content"]] == ["tool_result", "text"]
    assert "while the tool runs" in messages[2]["content"][1]["text"]
    assert "released" in messages[2]["content"][0]["content"]


async def test_before_provider_request_drains_late_arrivals(
    anthropic_api: FakeAnthropic,
    db_path: Path,
    cleanup: list[object],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A message arriving after the after_tool_results drain is taken before the next request."""
    anthropic_api.script = [tools(("sleep", {"seconds": 0})), text("ok")]
    rt = await open_runtime(db_path, anthropic_api)
    cleanup.append(rt)
    sid = await rt.create_session("assistant")
    original = Turn.checkpoint

    async def arrive_late(self: Turn, boundary: Boundary) -> list[QueueEntry]:
        drained = await original(self, boundary)
        if boundary is Boundary.AFTER_TOOL_RESULTS:
            await rt.submit(sid, operator("late arrival"))
        return drained

    monkeypatch.setattr(Turn, "checkpoint", arrive_late)
    await rt.submit(sid, operator("go"))
    await wait_for(rt, EventType.TURN_FINISHED)
    [admitted] = await all_events(rt, EventType.OPERATOR_INTERJECTION_ADMITTED)
    assert admitted.data.boundary == "before_provider_request"
    assert "late arrival" in anthropic_api.requests[1]["messages"][2]["content"][1]["text"]


async def test_failed_drain_puts_messages_back_in_order(
    anthropic_api: FakeAnthropic,
    db_path: Path,
    cleanup: list[object],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hold = asyncio.Event()
    anthropic_api.script = [text("first answer", hold=hold), text("second turn"), text("ack B")]
    rt = await open_runtime(db_path, anthropic_api)
    cleanup.append(rt)
    sid = await rt.create_session("assistant")
    await rt.submit(sid, operator("question"))
    await until(lambda: len(anthropic_api.requests) == 1)
    a = await rt.submit(sid, operator("A"))
    b = await rt.submit(sid, operator("B"))

    original_append = Writer.append_transcript
    failures = {"left": 1}

    def flaky_append(
        self: Writer,
        session_id: str,
        run_id: str | None,
        message: TranscriptMessage,
        source_message_ids: Sequence[str] = (),
    ) -> int:
        if failures["left"] and INTERJECTION_HEADER in message.text():
            failures["left"] -= 1
            raise OSError("disk full")
        return original_append(self, session_id, run_id, message, source_message_ids)

    monkeypatch.setattr(Writer, "append_transcript", flaky_append)
    hold.set()
    failed = await wait_for(rt, EventType.INTERJECTION_DRAIN_FAILED)
    assert failed.data.message_ids == [a.message_id, b.message_id]
    await rt.wait_idle()

    statuses = {m.id: m.status for m in await rt.store.messages(session_id=sid)}
    assert statuses[a.message_id] is QueueStatus.PROCESSED, "A started the next turn"
    assert statuses[b.message_id] is QueueStatus.INTERJECTED, "B followed A, into that turn"
    runs = await rt.store.runs(session_id=sid)
    assert [r.final_text for r in runs] == ["first answer", "ack B"]
    second_turn = anthropic_api.requests[1]["messages"]
    assert second_turn[-1]["content"][-1]["text"] == "A"
