"""A replica's sessions (`runtime/homes.py`) on a real PostgreSQL database: what comes while a
session is being taken up waits for it, so a message is answered once and no turn of its own
is taken for a crash's."""

from __future__ import annotations

import asyncio

from runtime import EventType
from runtime.homes import Homes
from runtime.records import SessionRecord
from tests.fakes.anthropic_api import FakeAnthropic, text
from tests.runtime.helpers import all_events, open_runtime, operator, until


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
