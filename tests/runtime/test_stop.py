"""Explicit stop: in-flight provider requests and tools, idempotence, stale ids (DESIGN §2)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from runtime.engine import Runtime
from runtime.errors import StaleRunError, UnknownRunError
from runtime.events import EventType
from runtime.messages import Priority, QueueStatus
from runtime.records import RunStatus
from runtime.transcript import check_invariants, normalize
from tests.fakes.anthropic_api import FakeAnthropic, text, tools
from tests.runtime.helpers import (
    all_events,
    blocking_tool,
    open_runtime,
    operator,
    process_alive,
    until,
    wait_for,
)


async def test_stop_during_provider_request(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    hold = asyncio.Event()
    anthropic_api.script = [text("thinking very long", hold=hold), text("fresh start")]
    rt = await open_runtime(db_path, anthropic_api)
    cleanup.append(rt)
    sid = await rt.create_session("assistant")
    first = await rt.submit(sid, operator("long question"))
    started = await wait_for(rt, EventType.PROGRESS, lambda e: e.data.step == "thinking")
    run_id = started.run_id
    assert run_id is not None
    await until(lambda: len(anthropic_api.requests) == 1)
    result = await rt.stop(sid, run_id)
    assert result.status == "stopped"
    assert (await rt.stop(sid, run_id)).status == "already_stopped"

    finished = await wait_for(rt, EventType.TURN_FINISHED)
    assert finished.data.outcome == "stopped"
    cancel = await wait_for(rt, EventType.PROGRESS, lambda e: e.data.state == "cancel_requested")
    assert cancel.run_id == run_id
    [entry] = [m for m in await rt.store.messages(session_id=sid) if m.id == first.message_id]
    assert entry.status is QueueStatus.ABORTED
    await asyncio.sleep(0.05)
    assert anthropic_api.disconnects == 1, "the in-flight request was cancelled"

    hold.set()
    await rt.submit(sid, operator("try again"))
    await rt.wait_idle()
    assert anthropic_api.refused == []
    runs = await rt.store.runs(session_id=sid)
    assert [r.status for r in runs] == [RunStatus.STOPPED, RunStatus.COMPLETED]
    assert runs[1].final_text == "fresh start"


async def test_two_stops_at_once_stop_once(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    """Two operators press Stop together: one stop is recorded and reported, the other is
    `already_stopped`, though both came before the first had written its record."""
    rt, sid, run_id, hold = await _thinking(anthropic_api, db_path, cleanup, "thinking long")
    results = await asyncio.gather(*(rt.stop(sid, run_id) for _ in range(2)))
    assert sorted(r.status for r in results) == ["already_stopped", "stopped"]
    cancels = [
        e for e in await all_events(rt, EventType.PROGRESS) if e.data.state == "cancel_requested"
    ]
    assert len(cancels) == 1
    hold.set()


async def test_stop_during_tool_kills_the_process_group(
    anthropic_api: FakeAnthropic, db_path: Path, tmp_path: Path, cleanup: list[object]
) -> None:
    gate, marker = tmp_path / "never", tmp_path / "pids"
    anthropic_api.script = [tools(("wait", {})), text("after the stop")]
    rt = await open_runtime(
        db_path, anthropic_api, command_tools=[blocking_tool("wait", gate, marker)]
    )
    cleanup.append(rt)
    sid = await rt.create_session("assistant")
    await rt.submit(sid, operator("run the long tool"))
    tool = await wait_for(rt, EventType.TOOL_STARTED)
    for _ in range(1500):  # the shell creates the file before it writes its pid's line
        if marker.exists() and marker.read_text().endswith("\n"):
            break
        await asyncio.sleep(0.02)
    pid = int(marker.read_text().split()[0])
    queued_after = await rt.submit(sid, operator("next", priority=Priority.NORMAL))
    assert (await rt.stop(sid, tool.run_id or "")).status == "stopped"

    finished = await wait_for(rt, EventType.TOOL_FINISHED)
    assert finished.data.status == "cancelled"
    assert not process_alive(pid), "the tool's process group was killed"
    [call] = await rt.store.tool_calls(run_id=tool.run_id)
    assert call.status == "cancelled"

    await rt.wait_idle()
    transcript = await rt.store.transcript(sid)
    assert check_invariants(normalize(transcript.rows)) == []
    statuses = {m.id: m.status for m in await rt.store.messages(session_id=sid)}
    assert statuses[queued_after.message_id] is QueueStatus.PROCESSED, "nothing queued is lost"
    second = anthropic_api.requests[-1]["messages"]
    assert second[2]["content"][0]["type"] == "tool_result"
    assert '"cancelled"' in second[2]["content"][0]["content"]
    assert anthropic_api.refused == []


async def test_stale_and_unknown_run_ids_are_errors(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    rt = await open_runtime(db_path, anthropic_api)
    cleanup.append(rt)
    sid = await rt.create_session("assistant")
    await rt.submit(sid, operator("hi"))
    finished = await wait_for(rt, EventType.TURN_FINISHED)
    with pytest.raises(StaleRunError):
        await rt.stop(sid, finished.run_id or "")
    with pytest.raises(UnknownRunError):
        await rt.stop(sid, "run_nope")


async def test_stopping_a_parent_stops_its_children(
    anthropic_api: FakeAnthropic, db_path: Path, tmp_path: Path, cleanup: list[object]
) -> None:
    gate, marker = tmp_path / "never", tmp_path / "pids"
    parent_hold = asyncio.Event()

    def respond(body: dict[str, object]) -> object:
        system = str(body.get("system", ""))
        if "private child agent" in system:
            return tools(("wait", {}))
        return text("waiting for my child", hold=parent_hold)

    anthropic_api.script = [tools(("spawn_agent", {"task": "run the long tool"}))]
    anthropic_api.responder = respond  # type: ignore[assignment]
    rt = await open_runtime(
        db_path, anthropic_api, command_tools=[blocking_tool("wait", gate, marker)]
    )
    cleanup.append(rt)
    sid = await rt.create_session("assistant")
    await rt.submit(sid, operator("delegate"))
    child_tool = await wait_for(rt, EventType.TOOL_STARTED, lambda e: e.data.name == "wait")
    parent_run = rt.status(sid).run_id
    assert parent_run is not None
    await rt.stop(sid, parent_run)
    child_finished = await wait_for(
        rt, EventType.TURN_FINISHED, lambda e: e.run_id == child_tool.run_id
    )
    assert child_finished.data.outcome == "stopped"
    parent_hold.set()
    await rt.wait_idle()
    task_results = [
        e for e in await all_events(rt, EventType.MESSAGE_QUEUED) if e.data.kind == "task_result"
    ]
    assert task_results == [], "a child stopped with its parent does not restart the parent"


async def test_a_stop_that_comes_as_the_turn_ends_on_its_own_says_it_came_too_late(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    """The turn answers while the stop is recording itself (issue 38's class): the stop is
    not reported as having stopped a turn that completed."""
    rt, sid, run_id, hold = await _thinking(anthropic_api, db_path, cleanup, "the full answer")
    handle = rt.sessions[sid].running
    assert handle is not None
    emit = rt.store.emit

    async def turn_ends_meanwhile(*events: Any) -> None:
        hold.set()
        await handle.finished.wait()
        await emit(*events)

    rt.store.emit = turn_ends_meanwhile  # type: ignore[method-assign]
    with pytest.raises(StaleRunError, match="ended"):
        await rt.stop(sid, run_id)
    rt.store.emit = emit  # type: ignore[method-assign]
    [run] = await rt.store.runs(session_id=sid)
    assert run.status is RunStatus.COMPLETED and run.final_text == "the full answer"


async def _thinking(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object], answer: str
) -> tuple[Runtime, str, str, asyncio.Event]:
    """A turn whose model request is in flight until `hold` is set, then answers `answer`:
    the runtime, the session, the run and `hold`."""
    hold = asyncio.Event()
    anthropic_api.script = [text(answer, hold=hold)]
    rt = await open_runtime(db_path, anthropic_api)
    cleanup.append(rt)
    sid = await rt.create_session("assistant")
    await rt.submit(sid, operator("question"))
    started = await wait_for(rt, EventType.PROGRESS, lambda e: e.data.step == "thinking")
    assert started.run_id is not None
    await until(lambda: len(anthropic_api.requests) == 1)
    return rt, sid, started.run_id, hold
