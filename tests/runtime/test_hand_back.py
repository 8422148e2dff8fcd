"""A stop of the process hands running turns back at their next safe point: a tool under way
runs to its end and its result is kept, a model call is cut at once, and the next start
resumes the turn from there, with nothing run twice and nothing answered as interrupted."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from runtime.engine import Runtime
from runtime.events import EventType
from runtime.messages import QueueStatus
from runtime.payloads import ApprovalRequested
from runtime.records import ApprovalStatus, RunStatus
from runtime.results import StopStatus
from runtime.tool_round import ToolRunner
from runtime.tools.base import Approval
from runtime.tools.command import CommandToolSpec
from tests.fakes.anthropic_api import FakeAnthropic, text, tools
from tests.runtime.helpers import (
    all_events,
    blocking_tool,
    counting_tool,
    open_runtime,
    operator,
    until,
    wait_for,
)


async def asked_times(rt: Runtime, times: int) -> bool:
    return len(await all_events(rt, EventType.APPROVAL_REQUESTED)) >= times


async def until_async(condition: Callable[[], Awaitable[bool]]) -> None:
    for _ in range(500):
        if await condition():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("condition not met in time")


def reshown(data: object) -> bool:
    return isinstance(data, ApprovalRequested) and data.reshown


def written(marker: Path) -> bool:
    return marker.exists() and marker.read_text().endswith("\n")  # created before written


async def tool_under_way(
    anthropic_api: FakeAnthropic, db_path: Path, tmp_path: Path
) -> tuple[Runtime, str, CommandToolSpec, Path, Path]:
    """A turn running a command tool that waits until `gate` exists (its process started)."""
    gate, marker = tmp_path / "gate", tmp_path / "marker"
    tool = blocking_tool("wait", gate, marker)
    anthropic_api.script = [tools(("wait", {}))]
    rt = await open_runtime(db_path, anthropic_api, command_tools=[tool])
    sid = await rt.create_session("assistant")
    await rt.submit(sid, operator("long job"))
    await until(lambda: written(marker), wait_s=30)  # a loaded machine is slow
    return rt, sid, tool, gate, marker


async def test_a_tool_under_way_at_a_stop_runs_to_its_end_and_the_next_start_goes_on(
    anthropic_api: FakeAnthropic, db_path: Path, tmp_path: Path, cleanup: list[object]
) -> None:
    rt, sid, tool, gate, marker = await tool_under_way(anthropic_api, db_path, tmp_path)
    stopping = asyncio.ensure_future(rt.hand_back(grace_s=30))
    await asyncio.sleep(0.3)
    assert not stopping.done(), "the stop waits for the tool"
    gate.touch()  # the tool finishes during the grace
    assert await stopping == 0, "every turn reached a safe point in time"
    assert len(anthropic_api.requests) == 1, "no new model call once handing back"
    await rt.close()

    anthropic_api.script = [text("after restart")]
    rt = await open_runtime(db_path, anthropic_api, command_tools=[tool])
    cleanup.append(rt)
    await rt.wait_idle()
    assert len(marker.read_text().splitlines()) == 1, "the tool ran once"
    [call] = await rt.store.tool_calls()
    assert call.status == "success", "its result was kept, not answered as interrupted"
    [result] = anthropic_api.requests[-1]["messages"][2]["content"]
    assert '"status": "success"' in result["content"] and '"result": "released' in result["content"]
    assert not result.get("is_error"), "the model is given the tool's own result"
    runs = await rt.store.runs(session_id=sid)
    assert [r.status for r in runs] == [RunStatus.INTERRUPTED, RunStatus.COMPLETED]
    assert runs[-1].final_text == "after restart"


async def test_a_model_call_under_way_at_a_stop_is_cut_at_once_and_asked_again(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    never = asyncio.Event()
    anthropic_api.script = [text("never said", hold=never)]
    rt = await open_runtime(db_path, anthropic_api)
    sid = await rt.create_session("assistant")
    await rt.submit(sid, operator("think hard"))
    for _ in range(500):
        if anthropic_api.requests:
            break
        await asyncio.sleep(0.01)
    started = time.monotonic()
    assert await rt.hand_back(grace_s=30) == 0
    assert time.monotonic() - started < 5, "a model call is not waited for"
    await rt.close()
    never.set()

    anthropic_api.script = [text("answered after the restart")]
    rt = await open_runtime(db_path, anthropic_api)
    cleanup.append(rt)
    await rt.wait_idle()
    runs = await rt.store.runs(session_id=sid)
    assert [r.status for r in runs] == [RunStatus.INTERRUPTED, RunStatus.COMPLETED]
    assert runs[-1].final_text == "answered after the restart"
    asked = anthropic_api.requests[-1]["messages"]
    assert str(asked).count("think hard") == 1, "the prompt is not appended twice"


async def test_a_sleep_under_way_at_a_stop_wakes_at_once_and_the_next_start_says_why(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    """A sleep is a wait, not work: a stop does not wait it out (up to the grace), it ends
    now with a result that says why, kept, and the next start goes on from it."""
    anthropic_api.script = [tools(("sleep", {"seconds": 600}))]
    rt = await open_runtime(db_path, anthropic_api)
    sid = await rt.create_session("assistant")
    await rt.submit(sid, operator("wait for the build"))
    await wait_for(rt, EventType.TOOL_STARTED, lambda e: e.data.name == "sleep")
    assert await rt.hand_back(grace_s=5) == 0, "the sleep ended within the grace"
    assert len(anthropic_api.requests) == 1, "no new model call once handing back"
    await rt.close()

    anthropic_api.script = [text("the build is still running")]
    rt = await open_runtime(db_path, anthropic_api)
    cleanup.append(rt)
    await rt.wait_idle()
    [call] = await rt.store.tool_calls()
    assert call.status == "success" and call.result is not None
    [result] = anthropic_api.requests[-1]["messages"][2]["content"]
    assert "woke early: Switchboard stopped" in result["content"], result
    runs = await rt.store.runs(session_id=sid)
    assert [r.status for r in runs] == [RunStatus.INTERRUPTED, RunStatus.COMPLETED]


async def test_a_tool_past_the_grace_is_cut_as_a_crash_would_cut_it(
    anthropic_api: FakeAnthropic, db_path: Path, tmp_path: Path, cleanup: list[object]
) -> None:
    rt, _, tool, _, _ = await tool_under_way(anthropic_api, db_path, tmp_path)
    assert await rt.hand_back(grace_s=0.2) == 1, "one session still had work at the end"
    await rt.close()
    anthropic_api.script = [text("after restart")]
    rt = await open_runtime(db_path, anthropic_api, command_tools=[tool])
    cleanup.append(rt)
    await rt.wait_idle()
    [call] = await rt.store.tool_calls()
    assert call.result is not None and call.result.error is not None
    assert call.result.error.kind == "interrupted"


async def test_a_call_waiting_for_approval_does_not_hold_the_stop_and_is_asked_again(
    anthropic_api: FakeAnthropic, db_path: Path, tmp_path: Path, cleanup: list[object]
) -> None:
    counter = tmp_path / "count"
    tool = replace(counting_tool("deploy", counter), approval=Approval(600))
    anthropic_api.script = [tools(("deploy", {}))]
    rt = await open_runtime(db_path, anthropic_api, command_tools=[tool])
    sid = await rt.create_session("assistant")
    await rt.submit(sid, operator("deploy it"))
    await wait_for(rt, EventType.APPROVAL_REQUESTED)
    started = time.monotonic()
    assert await rt.hand_back(grace_s=30) == 0, "an operator's answer is not waited for"
    assert time.monotonic() - started < 10
    await rt.close()

    anthropic_api.script = [text("deployed")]
    rt = await open_runtime(db_path, anthropic_api, command_tools=[tool])
    cleanup.append(rt)
    asked = await wait_for(rt, EventType.APPROVAL_REQUESTED, lambda e: reshown(e.data))
    assert isinstance(asked.data, ApprovalRequested)
    await rt.approvals.decide(asked.data.approval_id, ApprovalStatus.APPROVED, "alice")
    await rt.wait_idle()
    assert counter.read_text().splitlines() == ["run"], "run once, after the restart"
    assert (await rt.store.runs(session_id=sid))[-1].final_text == "deployed"


async def test_a_stop_as_a_round_needing_approval_starts_still_asks_for_it_after(
    anthropic_api: FakeAnthropic,
    db_path: Path,
    tmp_path: Path,
    cleanup: list[object],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The call counts as waiting for an operator only once its request is stored: cut before,
    it would be answered as interrupted after the restart, never asked."""
    counter = tmp_path / "count"
    tool = replace(counting_tool("deploy", counter), approval=Approval(600))
    anthropic_api.script = [tools(("deploy", {}))]
    rt = await open_runtime(db_path, anthropic_api, command_tools=[tool])
    stopping: list[asyncio.Future[int]] = []
    run = ToolRunner.run

    async def stopped_as_it_starts(self: ToolRunner, calls: Any, round_no: int) -> Any:
        stopping.append(asyncio.ensure_future(rt.hand_back(grace_s=30)))
        await asyncio.sleep(0)
        return await run(self, calls, round_no)

    monkeypatch.setattr(ToolRunner, "run", stopped_as_it_starts)
    sid = await rt.create_session("assistant")
    await rt.submit(sid, operator("deploy it"))
    await until(lambda: bool(stopping))
    assert await stopping[0] == 0
    before = len(await all_events(rt, EventType.APPROVAL_REQUESTED))  # 0 or 1: who came first
    await rt.close()
    monkeypatch.setattr(ToolRunner, "run", run)

    anthropic_api.script = [text("deployed")]
    rt = await open_runtime(db_path, anthropic_api, command_tools=[tool])
    cleanup.append(rt)
    await until_async(lambda: asked_times(rt, before + 1))  # asked by the resumed turn
    asked = (await all_events(rt, EventType.APPROVAL_REQUESTED))[-1]
    assert isinstance(asked.data, ApprovalRequested)
    await rt.approvals.decide(asked.data.approval_id, ApprovalStatus.APPROVED, "alice")
    await rt.wait_idle()
    assert counter.read_text().splitlines() == ["run"], "asked after the restart, run once"


async def test_an_operators_stop_during_a_hand_back_stops_the_turn(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    never = asyncio.Event()
    anthropic_api.script = [text("never said", hold=never)]
    rt = await open_runtime(db_path, anthropic_api)
    cleanup.append(rt)
    sid = await rt.create_session("assistant")
    await rt.submit(sid, operator("think hard"))
    await until(lambda: bool(anthropic_api.requests))
    run_id = rt.status(sid).run_id
    assert run_id is not None
    stop = asyncio.ensure_future(rt.stop(sid, run_id))
    await asyncio.sleep(0)  # the stop has claimed the turn, and records itself
    assert await rt.hand_back(grace_s=30) == 0
    assert (await stop).status is StopStatus.STOPPED, "the operator's stop wins"
    never.set()
    [run] = await rt.store.runs(session_id=sid)
    assert run.status is RunStatus.STOPPED


async def test_a_turn_waiting_for_a_compaction_does_not_start_once_stopping(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    hold = asyncio.Event()
    anthropic_api.script = [text("one")]
    rt = await open_runtime(db_path, anthropic_api)
    cleanup.append(rt)
    sid = await rt.create_session("assistant")
    await rt.submit(sid, operator("first " * 200))
    await rt.wait_idle()
    anthropic_api.script = [text("SUMMARY", hold=hold), text("answered while stopping")]
    rt.compact(sid)  # idle: it runs now, holding the session's turn lock
    await until(lambda: len(anthropic_api.requests) == 2)
    await rt.submit(sid, operator("later"))  # its worker waits for the lock
    stopping = asyncio.ensure_future(rt.hand_back(grace_s=10))
    await asyncio.sleep(0.2)
    hold.set()
    assert await stopping == 0
    assert len(anthropic_api.requests) == 2, "no turn started once the stop began"
    [queued] = await rt.store.messages(statuses=[QueueStatus.QUEUED])
    assert queued.message.text == "later", "it waits in the queue for the next start"
