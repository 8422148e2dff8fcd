"""Crash and reopen: nothing queued is lost, nothing interjected replays, no tool runs twice."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest

from runtime.events import EventType
from runtime.messages import QueueStatus
from runtime.payloads import TurnFinished
from runtime.records import RunStatus
from tests.fakes.anthropic_api import FakeAnthropic, text, tools
from tests.runtime.helpers import all_events, blocking_tool, counting_tool, open_runtime, operator

ROOT = Path(__file__).resolve().parents[2]
KEYS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")


async def test_sigkill_mid_turn_then_reopen_resumes_without_rerunning_tools(
    anthropic_api: FakeAnthropic, db_path: Path, tmp_path: Path, cleanup: list[object]
) -> None:
    counter = tmp_path / "count"
    never = asyncio.Event()
    anthropic_api.script = [tools(("count", {})), text("never finished", hold=never)]
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.runtime.crash_worker",
        str(db_path),
        anthropic_api.url,
        str(counter),
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        for _ in range(1500):  # a loaded machine takes seconds to start a Python process
            if len(anthropic_api.requests) >= 2:
                break
            await asyncio.sleep(0.02)
        assert len(anthropic_api.requests) == 2, "the worker reached its second round"
    finally:
        proc.send_signal(signal.SIGKILL)
        await proc.wait()
    never.set()

    anthropic_api.script = [text("resumed and done"), text("B done")]
    rt = await open_runtime(db_path, anthropic_api, command_tools=[counting_tool("count", counter)])
    cleanup.append(rt)
    await rt.wait_idle()

    assert counter.read_text().splitlines() == ["run"], "the tool ran exactly once"
    runs = await rt.store.runs(session_id="ses_crash")
    assert [r.status for r in runs] == [
        RunStatus.INTERRUPTED,
        RunStatus.COMPLETED,
        RunStatus.COMPLETED,
    ]
    assert [r.final_text for r in runs[1:]] == ["resumed and done", "B done"]
    resumed = anthropic_api.requests[2]["messages"]
    assert [m["role"] for m in resumed] == ["user", "assistant", "user"]
    assert str(resumed).count("A: count once") == 1, "the prompt is not appended twice"
    assert "counted" in resumed[2]["content"][0]["content"], "the stored result is reused"
    statuses = {m.message.text: m.status for m in await rt.store.messages()}
    assert statuses == {"A: count once": QueueStatus.PROCESSED, "B: later": QueueStatus.PROCESSED}
    assert len(await all_events(rt, EventType.RUN_RECOVERED)) == 1
    assert anthropic_api.refused == []
    # What the calls cost, exactly: the one answered before the kill and the two after, each
    # once; the call cut off by the kill (answered to nobody) is not counted.
    rows = await rt.store.read_sql(
        "SELECT input_tokens, output_tokens, cache_read_tokens, cache_write_tokens"
        " FROM model_usage ORDER BY at"
    )
    fake = anthropic_api.usages
    assert len(fake) == 4
    assert [tuple(r[k] for k in KEYS) for r in rows] == [
        (
            u["input_tokens"],
            u["output_tokens"],
            u["cache_read_input_tokens"],
            u["cache_creation_input_tokens"],
        )
        for u in (fake[0], fake[2], fake[3])
    ]


async def test_a_tool_cut_off_by_shutdown_is_answered_not_rerun(
    anthropic_api: FakeAnthropic, db_path: Path, tmp_path: Path, cleanup: list[object]
) -> None:
    gate, marker = tmp_path / "gate", tmp_path / "marker"
    tool = blocking_tool("wait", gate, marker)
    anthropic_api.script = [tools(("wait", {}))]
    rt = await open_runtime(db_path, anthropic_api, command_tools=[tool])
    sid = await rt.create_session("assistant")
    await rt.submit(sid, operator("long job"))
    for _ in range(1500):  # a loaded machine takes seconds to start the tool's process
        if marker.exists() and marker.read_text().endswith("\n"):  # created before written
            break
        await asyncio.sleep(0.02)
    await rt.close()  # the process goes away while the tool runs

    anthropic_api.script = [text("after restart")]
    rt = await open_runtime(db_path, anthropic_api, command_tools=[tool])
    cleanup.append(rt)
    await rt.wait_idle()
    assert len(marker.read_text().splitlines()) == 1, "the tool was not started again"
    [call] = await rt.store.tool_calls()
    assert call.status == "error" and call.result and call.result.error
    assert call.result.error.kind == "interrupted"
    last = anthropic_api.requests[-1]["messages"]
    assert last[2]["content"][0]["is_error"] is True
    assert "not run again" in last[2]["content"][0]["content"]
    runs = await rt.store.runs(session_id=sid)
    assert [r.status for r in runs] == [RunStatus.INTERRUPTED, RunStatus.COMPLETED]


async def test_interjected_messages_never_replay(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    hold = asyncio.Event()
    anthropic_api.script = [text("one", hold=hold), text("two")]
    rt = await open_runtime(db_path, anthropic_api)
    sid = await rt.create_session("assistant")
    await rt.submit(sid, operator("start"))
    for _ in range(200):
        if anthropic_api.requests:
            break
        await asyncio.sleep(0.01)
    await rt.submit(sid, operator("steer"))
    hold.set()
    await rt.wait_idle()
    await rt.close()
    rt = await open_runtime(db_path, anthropic_api)
    cleanup.append(rt)
    await rt.wait_idle()
    assert len(anthropic_api.requests) == 2, "nothing replayed after reopening"
    assert rt.status(sid).queued == 0


async def test_an_answer_committed_before_the_crash_is_delivered_not_asked_again(
    anthropic_api: FakeAnthropic,
    db_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    cleanup: list[object],
) -> None:
    """The process goes away after the turn's answer was recorded and before its run was
    finished (or, on replicas, the session moved then): the next start finishes that run with
    the recorded answer; the model is not asked again with a transcript ending in its own
    answer, and the answer is announced once."""
    from runtime import worker

    finishing = asyncio.Event()

    async def cut_off(*_: object) -> None:
        finishing.set()
        await asyncio.Event().wait()  # the process stops here

    anthropic_api.script = [text("the one answer")]
    rt = await open_runtime(db_path, anthropic_api)
    monkeypatch.setattr(worker, "finish_run", cut_off)
    sid = await rt.create_session("assistant")
    await rt.submit(sid, operator("ask once"))
    await asyncio.wait_for(finishing.wait(), 30)
    await rt.close()
    monkeypatch.undo()

    anthropic_api.script = [text("asked again")]
    rt = await open_runtime(db_path, anthropic_api)
    cleanup.append(rt)
    await rt.wait_idle()
    assert len(anthropic_api.requests) == 1, "the model was not asked again"
    [run] = await rt.store.runs(session_id=sid)
    assert (run.status, run.final_text) == (RunStatus.COMPLETED, "the one answer")
    [finished] = await all_events(rt, EventType.TURN_FINISHED)
    assert isinstance(finished.data, TurnFinished)
    assert finished.data.final_text == "the one answer"
    assert finished.data.resumed, "its answer goes out after the restart, saying so"
    assert await all_events(rt, EventType.RUN_RECOVERED) == []
    [message] = await rt.store.messages(session_id=sid)
    assert message.status is QueueStatus.PROCESSED
