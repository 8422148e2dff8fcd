"""Nothing lost to compaction (issue 40): before the older rows of a session whose agent keeps
memory are summarized, the model is asked in a side request, offering only `remember`, to keep
what should last; what it keeps is offered in a new session, though the summary dropped it. On
the proactive path, on the overflow path (the provider found the request too long) and with
/compact; an agent that keeps no memory gets no such request. With the fake Anthropic API,
which refuses any request that breaks the API's rules."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from runtime.agents import AgentSpec
from runtime.compaction import SUMMARY_SYSTEM
from runtime.engine import Runtime
from runtime.events import EventType
from runtime.memory_flush import FLUSH_REQUEST, ROUNDS
from runtime.memory_values import Audience
from runtime.payloads import ContextCompacted
from runtime.recall import HEADER
from runtime.results import CompactStatus, RuntimeSettings
from tests.fakes.anthropic_api import FakeAnthropic, Reply, error, text, tools
from tests.runtime.helpers import all_events, provider_for, until
from tests.runtime.test_memory_turns import dm, offered_in, tool_names
from tests.runtime.test_spend import usage_rows

AGENT = "acme/assistant"
PLAIN = "acme/plain"  # an agent that keeps no memory
SYSTEM = "You are a test agent."
DEPLOY = "Our deploy window is Tuesdays 14:00 UTC"
WINDOW = 3_000
SETTINGS = RuntimeSettings(context_window=WINDOW, max_tokens=200)
FILLER = "Some words of an operator in a long session. " * 6


def is_summary(body: dict[str, Any]) -> bool:
    return SUMMARY_SYSTEM[:40] in json.dumps(body.get("system", ""))


def is_flush(body: dict[str, Any]) -> bool:
    return FLUSH_REQUEST in json.dumps(body["messages"])


class Model:
    """A model that keeps the deploy window when a flush shows it, writes summaries that
    drop it (so only memory can carry it on), and otherwise answers shortly."""

    def __init__(self) -> None:
        self.flushes: list[dict[str, Any]] = []

    def __call__(self, body: dict[str, Any]) -> Reply:
        if is_summary(body):
            return text("The operator talked at length; nothing in particular to keep.")
        if is_flush(body):
            self.flushes.append(body)
            answered = body["messages"][-1]["content"]
            if any(b.get("type") == "tool_result" for b in answered if isinstance(b, dict)):
                return text("done")
            if "Tuesdays 14:00 UTC" in json.dumps(body["messages"]):
                return tools(("remember", {"text": DEPLOY}))
            return text("done")
        return text("Noted. " + "Some words of an answer. " * 4)


async def open_rt(db_path: Path, fake: FakeAnthropic, *, also: AgentSpec | None = None) -> Runtime:
    agent = AgentSpec(AGENT, SYSTEM, ("notify_operator", "sleep", "spawn_agent"), memory=AGENT)
    agents = [agent, *([also] if also else [])]
    return await Runtime.open(
        db_path, provider=provider_for(fake), agents=agents, settings=SETTINGS
    )


async def say(rt: Runtime, sid: str, words: str) -> None:
    await rt.submit(sid, dm(words))
    await rt.wait_idle(sid)


async def compactions(rt: Runtime) -> list[ContextCompacted]:
    found = [e.data for e in await all_events(rt, EventType.CONTEXT_COMPACTED)]
    assert all(isinstance(c, ContextCompacted) for c in found)
    return found  # type: ignore[return-value]


async def assert_kept_and_offered_anew(rt: Runtime, fake: FakeAnthropic, sid: str) -> None:
    """The deploy window was kept by a flush, is not in the transcript as a flush, and a new
    session (as after /new) is offered it though the summary dropped it."""
    [found] = await rt.memories.recall(Audience(AGENT, "alice", True), "deploy window")
    assert found.memory.text == DEPLOY and found.memory.session_id == sid
    stored = json.dumps([r.model_dump() for r in await rt.store.full_transcript(sid)])
    assert FLUSH_REQUEST not in stored and '"remember"' not in stored, "a side request"
    new = await rt.create_session(AGENT)
    await say(rt, new, "When is the deploy window?")
    offered = offered_in(fake.requests[-1])
    assert HEADER in offered and DEPLOY in offered
    assert fake.refused == [], "every request kept the API's rules"


async def test_a_fact_said_early_is_kept_before_a_proactive_compaction(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    anthropic_api.context_window = WINDOW
    anthropic_api.responder = model = Model()
    rt = await open_rt(db_path, anthropic_api)
    cleanup.append(rt)
    sid = await rt.create_session(AGENT)
    await say(rt, sid, "Remember: our deploy window is Tuesdays 14:00 UTC. " + FILLER)
    for n in range(40):
        await say(rt, sid, f"Message {n}. {FILLER}")
        if await compactions(rt):
            break
    [compacted, *_] = await compactions(rt)
    assert not compacted.requested and not compacted.fallback
    first = model.flushes[0]
    assert tool_names(first) == {"remember"}, "the flush offers remember only"
    assert first["system"][0]["text"] == SYSTEM
    assert first["messages"][-1]["content"][-1]["text"] == FLUSH_REQUEST
    flush_at = anthropic_api.requests.index(first)
    assert is_flush(anthropic_api.requests[flush_at + 1]), "its second round: 'done'"
    assert is_summary(anthropic_api.requests[flush_at + 2]), "then, and only then, the summary"
    purposes = [r["purpose"] for r in await usage_rows(rt)]
    assert purposes.count("memory_flush") >= 2 and "compaction" in purposes, purposes
    await assert_kept_and_offered_anew(rt, anthropic_api, sid)


async def test_a_fact_is_kept_before_compacting_a_request_the_provider_found_too_long(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    anthropic_api.context_window = WINDOW
    anthropic_api.responder = model = Model()
    rt = await open_rt(db_path, anthropic_api)
    cleanup.append(rt)
    sid = await rt.create_session(AGENT)
    await say(rt, sid, "Remember: our deploy window is Tuesdays 14:00 UTC.")
    for n in range(12):
        await say(rt, sid, f"Message {n}. {FILLER}")
    assert await compactions(rt) == [] and model.flushes == []
    rt.sessions[sid].context.tokens_per_char = 0.1  # now the estimate is far too low
    await say(rt, sid, "and now: " + "a long question " * 450)
    assert len(anthropic_api.refused) == 1, "the provider found it too long"
    anthropic_api.refused.clear()
    [compacted] = await compactions(rt)
    assert not compacted.requested
    assert model.flushes and tool_names(model.flushes[0]) == {"remember"}
    runs = await rt.store.runs(session_id=sid)
    assert runs[-1].error is None
    await assert_kept_and_offered_anew(rt, anthropic_api, sid)


async def test_compact_asked_for_in_a_running_turn_flushes_first(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    held = asyncio.Event()
    anthropic_api.responder = model = Model()
    rt = await open_rt(db_path, anthropic_api)
    cleanup.append(rt)
    sid = await rt.create_session(AGENT)
    await say(rt, sid, "Remember: our deploy window is Tuesdays 14:00 UTC.")
    for n in range(3):
        await say(rt, sid, f"Message {n}.")
    anthropic_api.script = [tools(("sleep", {"seconds": 0}), hold=held)]
    await rt.submit(sid, dm("run the tool"))
    await until(lambda: len(anthropic_api.requests) == 5)
    assert rt.compact(sid) is CompactStatus.AT_NEXT_STEP
    held.set()
    await rt.wait_idle(sid)
    [compacted] = await compactions(rt)
    assert compacted.requested
    assert model.flushes, "the flush ran before /compact's summary"
    await assert_kept_and_offered_anew(rt, anthropic_api, sid)


async def test_an_agent_keeping_no_memory_gets_no_flush(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    """Two agents of one runtime, one session each, told the same: only the one that keeps
    memory is asked to keep anything before its compaction."""
    anthropic_api.context_window = WINDOW
    anthropic_api.responder = model = Model()
    plain = AgentSpec(PLAIN, SYSTEM, ("notify_operator",), memory=None)
    rt = await open_rt(db_path, anthropic_api, also=plain)
    cleanup.append(rt)
    for agent in (PLAIN, AGENT):
        flushed, before = len(model.flushes), len(await compactions(rt))
        sid = await rt.create_session(agent)
        await say(rt, sid, "Remember: our deploy window is Tuesdays 14:00 UTC. " + FILLER)
        for n in range(40):
            await say(rt, sid, f"Message {n}. {FILLER}")
            if len(await compactions(rt)) > before:
                break
        assert len(await compactions(rt)) > before, "it compacted"
        assert (len(model.flushes) > flushed) is (agent == AGENT), agent
    plains = [r for r in await usage_rows(rt) if r["agent_id"] == PLAIN]
    assert {r["purpose"] for r in plains} == {"round", "compaction"}
    assert anthropic_api.refused == []


async def compact_idle(rt: Runtime, sid: str) -> None:
    """/compact on an idle session, waited for."""
    assert rt.compact(sid) is CompactStatus.STARTED
    await until(lambda: rt.sessions[sid].compaction is None)


async def test_compact_on_an_idle_session_flushes_first(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    anthropic_api.responder = model = Model()
    rt = await open_rt(db_path, anthropic_api)
    cleanup.append(rt)
    sid = await rt.create_session(AGENT)
    await say(rt, sid, "Remember: our deploy window is Tuesdays 14:00 UTC.")
    for n in range(3):
        await say(rt, sid, f"Message {n}.")
    await compact_idle(rt, sid)
    [compacted] = await compactions(rt)
    assert compacted.requested and model.flushes, "the flush ran before /compact's summary"
    assert tool_names(model.flushes[0]) == {"remember"}
    flushes = [r for r in await usage_rows(rt) if r["purpose"] == "memory_flush"]
    assert len(flushes) == 2 and {(r["payer"], r["run_id"]) for r in flushes} == {
        ("alice", None)
    }, "charged to who spoke last, in no run"
    await assert_kept_and_offered_anew(rt, anthropic_api, sid)


async def test_a_flush_that_fails_or_never_ends_does_not_hold_up_compaction(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    """A flush whose request the provider refuses is logged and compaction goes on; one that
    keeps calling remember stops after ROUNDS rounds. Either way the summary is written."""
    flushes: list[dict[str, Any]] = []

    def respond(body: dict[str, Any]) -> Reply:
        if is_summary(body):
            return text("A summary.")
        if is_flush(body):
            flushes.append(body)
            if len(flushes) == 1:
                return error(400, "invalid_request_error", "the flush is refused")
            return tools(("remember", {"text": f"{DEPLOY} (round {len(flushes)})"}))
        return text("Noted.")

    anthropic_api.responder = respond
    rt = await open_rt(db_path, anthropic_api)
    cleanup.append(rt)
    sid = await rt.create_session(AGENT)
    for n, flushed in ((1, 1), (2, 1 + ROUNDS)):
        for m in range(3):
            await say(rt, sid, f"Remember: our deploy window is Tuesdays 14:00 UTC. {n}.{m}")
        await compact_idle(rt, sid)
        assert len(flushes) == flushed
        assert len(await compactions(rt)) == n and not (await compactions(rt))[-1].fallback
    kept = await rt.memories.recall(Audience(AGENT, "alice", True), "deploy window", 10)
    assert len(kept) == ROUNDS, "a memory a round, then the flush ended"
    assert anthropic_api.refused == []
