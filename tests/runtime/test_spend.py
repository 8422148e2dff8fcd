"""What model calls cost: each call recorded with its round, charged to whoever started the
turn; the runaway guards; a turn a spend gate holds, let go by an approval or stopped."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from config.prices import PriceConfig, PriceTable
from runtime.agents import WakeupLimits
from runtime.engine import Runtime
from runtime.events import EventType
from runtime.records import RunStatus
from runtime.results import RuntimeSettings
from runtime.spend import HoldKind, NoLimits, PlannedCall, SpendHold
from tests.fakes.anthropic_api import FakeAnthropic, Reply, text, tools
from tests.runtime.helpers import MODEL, all_events, open_runtime, operator, until

PRICED = PriceTable.with_overrides({MODEL: PriceConfig(input=3.0, output=15.0)})


async def usage_rows(rt: Runtime) -> list[dict[str, Any]]:
    rows = await rt.store.read_sql(
        "SELECT * FROM model_usage ORDER BY at, input_tokens + output_tokens"
    )
    return [dict(r) for r in rows]


def as_fake(row: dict[str, Any]) -> dict[str, int]:
    """A stored row in the shape of the usage the API answered."""
    return {
        "input_tokens": row["input_tokens"],
        "cache_creation_input_tokens": row["cache_write_tokens"],
        "cache_read_input_tokens": row["cache_read_tokens"],
        "output_tokens": row["output_tokens"],
    }


async def test_every_call_is_recorded_with_its_cost_and_who_pays(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    anthropic_api.script = [tools(("sleep", {"seconds": 0})), text("done")]
    rt = await open_runtime(db_path, anthropic_api, settings=RuntimeSettings(prices=PRICED))
    cleanup.append(rt)
    sid = await rt.create_session("assistant")
    await rt.submit(sid, operator("go", sender="alice"))
    await rt.wait_idle()

    rows = await usage_rows(rt)
    assert [as_fake(r) for r in rows] == anthropic_api.usages, "each call, as the API counted it"
    [run] = await rt.store.runs(session_id=sid)
    assert {(r["payer"], r["agent_id"], r["run_id"], r["purpose"]) for r in rows} == {
        ("alice", "assistant", run.id, "round")
    }
    for r in rows:
        expected = (
            r["input_tokens"] * 3 + r["output_tokens"] * 15 + r["cache_write_tokens"] * 3.75
        ) / 1e6 + r["cache_read_tokens"] * 0.3 / 1e6
        assert abs(r["cost_usd"] - expected) < 1e-12 and r["priced"]
    assert run.payer == "alice"


async def test_the_same_call_round_after_round_ends_the_turn_saying_why(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    anthropic_api.responder = lambda body: tools(("sleep", {"seconds": 0}))
    rt = await open_runtime(db_path, anthropic_api)
    cleanup.append(rt)
    sid = await rt.create_session("assistant")
    await rt.submit(sid, operator("loop"))
    await rt.wait_idle()

    [run] = await rt.store.runs(session_id=sid)
    assert run.status is RunStatus.FAILED
    assert "called `sleep` with the same input 10 times" in (run.error or "")
    assert "max_repeated_calls" in (run.error or ""), "it says which setting to change"
    assert len(anthropic_api.requests) == 10, "no eleventh call"
    assert anthropic_api.refused == []


async def test_a_turn_past_its_token_cap_ends_before_the_call(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    calls = iter(range(1000))
    anthropic_api.responder = lambda body: tools(("sleep", {"seconds": next(calls) / 1e6}))
    settings = RuntimeSettings(max_turn_tokens=6_000)
    rt = await open_runtime(db_path, anthropic_api, settings=settings)
    cleanup.append(rt)
    sid = await rt.create_session("assistant")
    await rt.submit(sid, operator("work"))
    await rt.wait_idle()

    [run] = await rt.store.runs(session_id=sid)
    assert run.status is RunStatus.FAILED and "max_turn_tokens" in (run.error or "")
    used = sum(u["input_tokens"] + u["output_tokens"] for u in anthropic_api.usages)
    assert used <= 6_000, "the cap is never passed"
    assert len(anthropic_api.requests) >= 2


class CountingGate(NoLimits):
    """Holds every call after the first `free` ones, unless the turn was approved."""

    def __init__(self, free: int, kind: HoldKind = HoldKind.WAIT) -> None:
        self.free = free
        self.kind = kind
        self.asked: list[PlannedCall] = []

    async def before_call(self, call: PlannedCall) -> SpendHold | None:
        self.asked.append(call)
        if len({c.estimate for c in self.asked}) <= self.free or call.approved:
            return None
        return SpendHold(self.kind, "the test's budget is spent", "workspace/day", None)


async def test_a_held_turn_waits_and_an_approval_lets_it_go_on(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    anthropic_api.script = [tools(("sleep", {"seconds": 0})), text("finished")]
    rt = await open_runtime(db_path, anthropic_api)
    cleanup.append(rt)
    gate = CountingGate(free=1)
    rt.limit_spend(gate)
    sid = await rt.create_session("assistant")
    await rt.submit(sid, operator("go", sender="alice"))
    await until(lambda: rt.held.of(sid) is not None)

    assert len(anthropic_api.requests) == 1, "the second call waits"
    assert rt.status(sid).step == "held: the test's budget is spent"
    [held] = await all_events(rt, EventType.SPEND_HELD)
    assert held.data.model_dump()["reason"] == "the test's budget is spent"
    assert gate.asked[-1].charge.payer == "alice" and gate.asked[-1].estimate.input_tokens > 0

    rt.held.approve(sid, "bob")
    await rt.wait_idle()
    [run] = await rt.store.runs(session_id=sid)
    assert (run.status, run.final_text) == (RunStatus.COMPLETED, "finished")
    [released] = await all_events(rt, EventType.SPEND_RELEASED)
    assert released.data.model_dump()["by"] == "bob"
    assert anthropic_api.refused == []


async def test_a_held_turn_stopped_leaves_a_transcript_the_next_turn_can_use(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    anthropic_api.script = [tools(("sleep", {"seconds": 0})), text("after the stop")]
    rt = await open_runtime(db_path, anthropic_api)
    cleanup.append(rt)
    rt.limit_spend(CountingGate(free=1))
    sid = await rt.create_session("assistant")
    await rt.submit(sid, operator("go"))
    await until(lambda: rt.held.of(sid) is not None)
    run_id = rt.status(sid).run_id or ""
    await asyncio.wait_for(rt.stop(sid, run_id), 5)

    rt.limit_spend(CountingGate(free=100))
    await rt.submit(sid, operator("again"))
    await rt.wait_idle()
    runs = await rt.store.runs(session_id=sid)
    assert [r.status for r in runs] == [RunStatus.STOPPED, RunStatus.COMPLETED]
    assert runs[1].final_text == "after the stop"
    assert anthropic_api.refused == [], "the API took the transcript as the stop left it"


async def test_a_limit_that_ends_the_turn_stops_it_before_the_call(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    anthropic_api.script = [tools(("sleep", {"seconds": 0})), text("never")]
    rt = await open_runtime(db_path, anthropic_api)
    cleanup.append(rt)
    rt.limit_spend(CountingGate(free=1, kind=HoldKind.END))
    sid = await rt.create_session("assistant")
    await rt.submit(sid, operator("go"))
    await rt.wait_idle()
    [run] = await rt.store.runs(session_id=sid)
    assert (run.status, run.error) == (RunStatus.STOPPED, "the test's budget is spent")
    assert len(anthropic_api.requests) == 1


def last_words(body: dict[str, Any]) -> str:
    """The text of the request's last message (its text and its tool results)."""
    content = body["messages"][-1]["content"]
    if isinstance(content, str):
        return content
    return " ".join(str(b.get("text") or b.get("content") or "") for b in content)


async def test_a_child_and_a_wake_up_are_charged_to_who_started_the_work(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    def respond(body: dict[str, Any]) -> Reply:
        last = last_words(body)
        if "child-task" in str(body["messages"][0]["content"]):
            return text("child result")
        if "look again" in last:
            return text("looked again")
        if "child result" in last:
            return tools(("schedule_wakeup", {"when": "1s", "note": "look again"}))
        if "started child agent" in last:
            return text("waiting for the child")
        return tools(("spawn_agent", {"task": "child-task"}))

    anthropic_api.responder = respond
    rt = await open_runtime(
        db_path, anthropic_api, tools=["schedule_wakeup"], wakeups=WakeupLimits(min_delay_s=1)
    )
    cleanup.append(rt)
    sid = await rt.create_session("assistant")
    await rt.submit(sid, operator("start", sender="carol"))
    for _ in range(400):
        runs = await rt.store.runs(session_id=sid)
        if any(r.final_text == "looked again" for r in runs):
            break
        await asyncio.sleep(0.05)
    await rt.wait_idle()
    rows = await usage_rows(rt)
    assert len(rows) == len(anthropic_api.usages) == 5
    assert {r["payer"] for r in rows} == {"carol"}, "the child's and the wake-up's calls too"
    assert sum(r["agent_id"] == "assistant/child-1" for r in rows) == 1
    wake = (await rt.store.runs(session_id=sid))[-1]
    assert (wake.final_text, wake.payer) == ("looked again", "carol")
