"""Queue modes, the cap with its drop policy, and who may enter a running turn (DESIGN §2)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from runtime.clock import ManualClock
from runtime.engine import Runtime
from runtime.events import EventType
from runtime.messages import (
    DropPolicy,
    MessageKind,
    Origin,
    Priority,
    QueueMode,
    QueueStatus,
    Trust,
)
from runtime.records import RunStatus
from runtime.results import RuntimeSettings
from tests.fakes.anthropic_api import FakeAnthropic, text
from tests.runtime.helpers import all_events, open_runtime, operator, until, wait_for


async def _held_turn(
    anthropic_api: FakeAnthropic,
    db_path: Path,
    cleanup: list[object],
    mode: QueueMode,
    **settings: Any,
) -> tuple[Runtime, str, asyncio.Event]:
    hold = asyncio.Event()
    anthropic_api.script = [text("first turn", hold=hold)]
    anthropic_api.responder = lambda body: text("later turn")
    rt = await open_runtime(
        db_path, anthropic_api, settings=RuntimeSettings(default_queue_mode=mode, **settings)
    )
    cleanup.append(rt)
    sid = await rt.create_session("assistant")
    await rt.submit(sid, operator("first"))
    await until(lambda: len(anthropic_api.requests) == 1)
    return rt, sid, hold


async def test_followup_waits_for_the_turn_then_starts_a_new_one(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    rt, sid, hold = await _held_turn(anthropic_api, db_path, cleanup, QueueMode.FOLLOWUP)
    result = await rt.submit(sid, operator("second"))
    assert result.status == "queued"
    hold.set()
    await rt.wait_idle()
    assert await all_events(rt, EventType.OPERATOR_INTERJECTION_ADMITTED) == []
    runs = await rt.store.runs(session_id=sid)
    assert [r.final_text for r in runs] == ["first turn", "later turn"]
    assert len(anthropic_api.requests[0]["messages"]) == 1
    assert anthropic_api.requests[1]["messages"][-1]["content"][-1]["text"] == "second"


async def test_collect_merges_messages_within_the_debounce_window(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    clock = ManualClock()
    rt = await open_runtime(
        db_path,
        anthropic_api,
        clock=clock,
        settings=RuntimeSettings(default_queue_mode=QueueMode.COLLECT, collect_window_s=2.0),
    )
    cleanup.append(rt)
    sid = await rt.create_session("assistant")
    for part in ("one", "two", "three"):
        await rt.submit(sid, operator(part))
        await clock.advance(0.5)
    assert anthropic_api.requests == [], "nothing is sent inside the window"
    await clock.advance(2.0)
    await rt.wait_idle()
    [request] = anthropic_api.requests
    prompt = request["messages"][0]["content"][0]["text"]
    assert [prompt.index(p) for p in ("one", "two", "three")] == sorted(
        prompt.index(p) for p in ("one", "two", "three")
    )
    [run] = await rt.store.runs(session_id=sid)
    assert run.status is RunStatus.COMPLETED
    assert {m.status for m in await rt.store.messages(session_id=sid)} == {QueueStatus.PROCESSED}


async def test_interrupt_aborts_the_running_turn_and_starts_with_the_message(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    rt, sid, _hold = await _held_turn(anthropic_api, db_path, cleanup, QueueMode.INTERRUPT)
    result = await rt.submit(sid, operator("drop that, do this"))
    assert result.status == "interrupting"
    await rt.wait_idle()
    runs = await rt.store.runs(session_id=sid)
    assert [r.status for r in runs] == [RunStatus.STOPPED, RunStatus.COMPLETED]
    assert runs[1].final_text == "later turn"
    assert "drop that, do this" in str(anthropic_api.requests[-1]["messages"][-1])
    assert anthropic_api.refused == []


async def test_cap_drops_oldest_and_says_so(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    rt, sid, hold = await _held_turn(
        anthropic_api,
        db_path,
        cleanup,
        QueueMode.FOLLOWUP,
        queue_cap=2,
        drop_policy=DropPolicy.OLDEST,
    )
    ids = [(await rt.submit(sid, operator(f"m{i}"))).message_id for i in range(3)]
    [dropped] = await all_events(rt, EventType.MESSAGE_DROPPED)
    assert dropped.data.message_id == ids[0]
    assert dropped.data.sender == "alice" and "oldest" in dropped.data.reason
    hold.set()
    await rt.wait_idle()
    statuses = {m.id: m.status for m in await rt.store.messages(session_id=sid)}
    assert statuses[ids[0]] is QueueStatus.DROPPED
    assert statuses[ids[1]] is statuses[ids[2]] is QueueStatus.PROCESSED


async def test_cap_drops_newest_and_says_so(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    rt, sid, hold = await _held_turn(
        anthropic_api,
        db_path,
        cleanup,
        QueueMode.FOLLOWUP,
        queue_cap=2,
        drop_policy=DropPolicy.NEWEST,
    )
    results = [await rt.submit(sid, operator(f"m{i}")) for i in range(3)]
    assert [r.status for r in results] == ["queued", "queued", "dropped"]
    [dropped] = await all_events(rt, EventType.MESSAGE_DROPPED)
    assert dropped.data.message_id == results[2].message_id
    hold.set()
    await rt.wait_idle()


async def test_only_trusted_operator_interject_prompts_enter_a_running_turn(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    rt, sid, hold = await _held_turn(anthropic_api, db_path, cleanup, QueueMode.STEER)
    outsiders = [
        operator("stranger", trust=Trust.UNTRUSTED_EXTERNAL),
        operator("integration", trust=Trust.TRUSTED_INTEGRATION),
        operator("not urgent", priority=Priority.NORMAL),
        operator("channel", kind=MessageKind.CHANNEL_EVENT, origin=Origin.CHANNEL),
        operator(
            "timer", kind=MessageKind.TIMER_TICK, origin=Origin.TIMER, trust=Trust.TRUSTED_SYSTEM
        ),
    ]
    for message in outsiders:
        result = await rt.submit(sid, message)
        assert result.status == "queued"
    hold.set()
    first = await wait_for(rt, EventType.TURN_FINISHED)
    assert first.data.final_text == "first turn"
    await rt.wait_idle()
    assert await all_events(rt, EventType.OPERATOR_INTERJECTION_ADMITTED) == []
    assert len(anthropic_api.requests[0]["messages"]) == 1
    assert len(await rt.store.runs(session_id=sid)) == 1 + len(outsiders)
    messages = await rt.store.messages(session_id=sid)
    stored = {m.message.text: m.message.authority_class for m in messages}
    assert stored["stranger"] == "external" and stored["integration"] == "integration"
