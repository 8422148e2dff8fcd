"""The offline model drives the real runtime: tools, interjections, echo; no network."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path

from runtime.agents import AgentSpec
from runtime.clock import ManualClock
from runtime.engine import Runtime
from runtime.events import EventType
from runtime.providers.base import ProviderRequest
from runtime.providers.offline import OfflineProvider
from runtime.transcript import TextBlock, TranscriptMessage
from tests.runtime.helpers import all_events, operator, wait_for


async def test_work_with_an_interjection_is_acknowledged(
    db_path: Path, cleanup: list[object]
) -> None:
    rt = await Runtime.open(db_path, provider=OfflineProvider(), agents=[AgentSpec("assistant")])
    cleanup.append(rt)
    sid = await rt.create_session("assistant")
    await rt.submit(sid, operator("work 3"))
    await wait_for(rt, EventType.TOOL_STARTED)
    await rt.submit(sid, operator("how is it going?"))
    finished = await wait_for(rt, EventType.TURN_FINISHED)
    assert finished.data.outcome == "completed"
    [_admitted] = await all_events(rt, EventType.OPERATOR_INTERJECTION_ADMITTED)
    texts = [e.data.text for e in await all_events(rt, EventType.ASSISTANT_TEXT)]
    assert any("Noted your message while I was working: “how is it going?”" in t for t in texts)
    assert finished.data.final_text == (
        "Done: 3 step(s). Last result: slept 1s\nWhile I worked you said: “how is it going?”."
    )
    sleeps = [e for e in await all_events(rt, EventType.TOOL_FINISHED)]
    assert len(sleeps) == 3, "the plan went on after the interjection"


async def test_echo_and_notify(db_path: Path, cleanup: list[object]) -> None:
    rt = await Runtime.open(db_path, provider=OfflineProvider(), agents=[AgentSpec("assistant")])
    cleanup.append(rt)
    sid = await rt.create_session("assistant")
    await rt.submit(sid, operator("hello there"))
    await asyncio.wait_for(rt.wait_idle(), 10)
    await rt.submit(sid, operator("notify the build is red"))
    await asyncio.wait_for(rt.wait_idle(), 10)
    runs = await rt.store.runs(session_id=sid)
    assert runs[0].final_text == "You said: hello there"
    [record] = await rt.store.notifications()
    assert record.message == "the build is red"


async def test_progress_states_over_a_turn(db_path: Path, cleanup: list[object]) -> None:
    rt = await Runtime.open(db_path, provider=OfflineProvider(), agents=[AgentSpec("assistant")])
    cleanup.append(rt)
    sid = await rt.create_session("assistant")
    await rt.submit(sid, operator("sleep 0.2"))
    await asyncio.wait_for(rt.wait_idle(), 10)
    progress = [(e.data.state, e.data.step) for e in await all_events(rt, EventType.PROGRESS)]
    assert progress == [
        ("queued", "waiting to start"),
        ("running", "thinking"),
        ("running", "running sleep"),
        ("waiting", "waiting; a message from you wakes it"),
        ("running", "thinking (round 2)"),
    ]


async def test_the_offline_model_takes_a_summary_and_estimates_its_usage() -> None:
    def request(summary: str | None = None) -> ProviderRequest:
        prompt = TranscriptMessage(role="user", blocks=[TextBlock(text="hello there")])
        return ProviderRequest("offline", "Be kind.", [prompt], [], 100, summary=summary)

    offline = OfflineProvider()
    plain = await offline.complete(request(), lambda _: None, lambda *_: None)
    summarized = await offline.complete(request("x" * 400), lambda _: None, lambda *_: None)
    assert summarized.text() == plain.text() == "You said: hello there"
    assert summarized.usage.input_tokens == plain.usage.input_tokens + 100
    assert plain.usage.output_tokens == math.ceil(len("You said: hello there") / 4)
    assert plain.usage.cache_read_tokens == plain.usage.cache_write_tokens == 0


async def test_remind_ends_the_turn_and_the_note_comes_back_later(
    db_path: Path, cleanup: list[object]
) -> None:
    clock = ManualClock()
    agent = AgentSpec("assistant", tools=("schedule_wakeup",))
    rt = await Runtime.open(db_path, provider=OfflineProvider(), agents=[agent], clock=clock)
    cleanup.append(rt)
    sid = await rt.create_session("assistant")
    await rt.submit(sid, operator("remind 10s stretch your legs"))
    await asyncio.wait_for(rt.wait_idle(), 10)
    [asked] = await rt.store.runs(session_id=sid)
    assert asked.final_text == "I will come back to “stretch your legs” in 10s."
    await clock.advance(10)
    await wait_for(rt, EventType.WAKEUP_FIRED)
    await asyncio.wait_for(rt.wait_idle(), 10)
    woken = (await rt.store.runs(session_id=sid))[-1]
    assert woken.final_text == "Woken as you asked: stretch your legs"
