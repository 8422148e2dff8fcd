"""A replica's sessions (`runtime/homes.py`) on a real PostgreSQL database: what comes while a
session is being taken up waits for it, so a message is answered once and no turn of its own
is taken for a crash's; /new reaches the replica that runs the session."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from runtime.events import EventType
from runtime.homes import Homes
from runtime.memory_values import Audience
from runtime.records import SessionRecord
from tests.fakes.anthropic_api import FakeAnthropic, Reply, text
from tests.runtime.helpers import all_events, open_runtime, operator, until
from tests.runtime.test_memory_flush import AGENT, DEPLOY, Model, is_flush, is_summary, open_rt
from tests.runtime.test_memory_turns import dm


async def test_a_message_submitted_while_its_session_is_taken_up_is_answered_once(
    pg_url: str, anthropic_api: FakeAnthropic
) -> None:
    anthropic_api.script = [text("one answer"), text("a second answer")]
    runtime = await open_runtime(pg_url, anthropic_api)
    try:
        session_id = await runtime.create_session("assistant")  # no replica holds it yet
        homes = runtime.homes = Homes(runtime, "replica-a", 10.0, 100)
        await homes.start()
        reading, gate = asyncio.Event(), asyncio.Event()
        read_session = runtime.store.session

        async def slow(sid: str) -> SessionRecord | None:  # the take-up's first read, held
            reading.set()
            await gate.wait()
            return await read_session(sid)

        runtime.store.session = slow  # type: ignore[method-assign]
        holding = asyncio.ensure_future(homes.hold(session_id))
        await reading.wait()
        assert homes.lease(session_id) is None, "not run here until taken up"
        await runtime.submit(session_id, operator("hello"))
        gate.set()
        assert await holding
        await until(lambda: len(anthropic_api.requests) == 1)
        await runtime.wait_idle(session_id)
        await asyncio.sleep(0.3)  # a second turn would start now
        assert len(await all_events(runtime, EventType.TURN_STARTED)) == 1
        assert await all_events(runtime, EventType.RUN_RECOVERED) == []
        assert len(anthropic_api.requests) == 1
    finally:
        if runtime.homes is not None:
            await runtime.homes.stop()
        await runtime.close()


async def test_new_on_a_replica_that_does_not_run_the_session_flushes_where_it_runs(
    pg_url: str, anthropic_api: FakeAnthropic
) -> None:
    """/new reaches a replica while another runs a turn of the session: what should last is
    kept by the replica running it, once that turn is over, so the flush sees the turn's
    answer (on the replica that got /new it would have run at once, beside the turn)."""
    model, answered = Model(), asyncio.Event()

    def respond(body: dict[str, Any]) -> Reply:
        if is_flush(body) or is_summary(body):
            return model(body)
        return text("Noted: Tuesdays 14:00 UTC.", hold=answered)

    anthropic_api.responder = respond
    a, b = await open_rt(pg_url, anthropic_api), await open_rt(pg_url, anthropic_api)
    try:
        for runtime, name in ((a, "replica-a"), (b, "replica-b")):
            runtime.homes = Homes(runtime, name, 10.0, 100)
            await runtime.homes.start()
        session_id = await b.create_session(AGENT)  # held by b, which created it
        await b.submit(session_id, dm("Remember: deploys on Tuesdays 14:00 UTC"))
        await until(lambda: (s := a.sessions.get(session_id)) is not None and bool(s.elsewhere))
        assert a.leave(session_id), "the agent keeps memory: a flush follows"
        await asyncio.sleep(0.5)
        assert model.flushes == [], "no flush while the turn runs"
        answered.set()
        await until(lambda: len(model.flushes) >= 1)
        await b.wait_idle(session_id)
        assert "Noted: Tuesdays" in json.dumps(model.flushes[0]["messages"]), "after the turn"
        [kept] = await b.memories.recall(Audience(AGENT, "alice", True), "deploy")
        assert kept.memory.text == DEPLOY
        assert anthropic_api.refused == []
    finally:
        for runtime in (a, b):
            if runtime.homes is not None:
                await runtime.homes.stop()
            await runtime.close()
