"""schedule_wakeup: the turn ends at once, and a later turn starts with the agent's note; the
wake-up is durable (it fires after a restart, once) and can be cancelled. The clock is a
`ManualClock`, so an hour's wait costs nothing."""

from __future__ import annotations

import json
from pathlib import Path

from runtime import EventType, MessageKind
from runtime.clock import ManualClock
from runtime.prompts import WAKEUP_HEADER
from runtime.records import WakeupStatus
from tests.fakes.anthropic_api import FakeAnthropic, text, tools
from tests.runtime.helpers import all_events, open_runtime, operator, until

WAKE = ("schedule_wakeup", {"when": "1h", "note": "look at the build again"})


def _texts(request: dict[str, object]) -> str:
    return json.dumps(request["messages"])


async def test_a_wakeup_ends_the_turn_and_fires_once_after_a_restart(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    clock = ManualClock()
    anthropic_api.script = [
        tools(WAKE),
        text("The build is green now."),
    ]
    rt = await open_runtime(db_path, anthropic_api, tools=["schedule_wakeup"], clock=clock)
    sid = await rt.create_session("assistant")
    await rt.submit(sid, operator("tell me when the build is green"))
    await rt.wait_idle()
    assert len(anthropic_api.requests) == 1, "the turn asked the model again after the wake-up"
    [run] = await rt.store.runs(session_id=sid)
    assert run.final_text.startswith("wake-up set for ")
    [pending] = await rt.store.wakeups.pending()
    assert pending.note == "look at the build again"
    assert pending.due_at == clock.wall() + 3600
    await rt.close()

    # down for two hours; the wake-up fires once the runtime is back, saying it is late
    await clock.advance(7200)
    again = await open_runtime(db_path, anthropic_api, tools=["schedule_wakeup"], clock=clock)
    cleanup.append(again)
    await until(lambda: len(anthropic_api.requests) == 2)
    await again.wait_idle()
    woken = _texts(anthropic_api.requests[1])
    assert WAKEUP_HEADER in woken and "look at the build again" in woken
    assert "3600s late" in woken
    runs = await again.store.runs(session_id=sid)
    assert [r.final_text for r in runs][-1] == "The build is green now."
    [fired] = await all_events(again, EventType.WAKEUP_FIRED)
    assert (await again.store.wakeups.get(pending.id)).status is WakeupStatus.FIRED  # type: ignore[union-attr]
    [message] = await again.store.messages_by_id([fired.data.message_id])  # type: ignore[attr-defined]
    assert message.message.kind is MessageKind.TIMER_TICK

    await clock.advance(7200)
    await again.wait_idle()
    assert len(anthropic_api.requests) == 2, "the wake-up fired twice"


async def test_a_cancelled_wakeup_never_fires(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    clock = ManualClock()
    anthropic_api.script = [tools(WAKE)]
    rt = await open_runtime(db_path, anthropic_api, tools=["schedule_wakeup"], clock=clock)
    cleanup.append(rt)
    sid = await rt.create_session("assistant")
    await rt.submit(sid, operator("watch the build"))
    await rt.wait_idle()
    [pending] = rt.alarm.pending()
    assert await rt.alarm.cancel(pending.id, "alice") is not None
    assert await rt.alarm.cancel(pending.id, "alice") is None, "cancelled twice"
    await clock.advance(7200)
    await rt.wait_idle()
    assert len(anthropic_api.requests) == 1
    [cancelled] = await all_events(rt, EventType.WAKEUP_CANCELLED)
    assert cancelled.data.by == "alice"  # type: ignore[attr-defined]
    assert await rt.store.wakeups.pending() == []


async def test_a_wakeup_in_the_past_or_unreadable_is_an_error_the_model_reads(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    anthropic_api.script = [
        tools(("schedule_wakeup", {"when": "tomorrow-ish", "note": "x"})),
        tools(("schedule_wakeup", {"when": "2020-01-01T00:00:00Z", "note": "x"})),
        text("I could not set it."),
    ]
    rt = await open_runtime(db_path, anthropic_api, tools=["schedule_wakeup"])
    cleanup.append(rt)
    sid = await rt.create_session("assistant")
    await rt.submit(sid, operator("wake me"))
    await rt.wait_idle()
    assert len(anthropic_api.requests) == 3, "a refused wake-up must not end the turn"
    second, third = (_texts(r) for r in anthropic_api.requests[1:])
    assert "neither a delay" in second
    assert "not in the future" in third
    assert await rt.store.wakeups.pending() == []
