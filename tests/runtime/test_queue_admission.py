"""Admission at the queue's cap while the session's worker starts and ends turns (issue 38):
a message is dropped or run, never both; the queue never passes its cap; and the session
never wedges, whatever the interleaving of submits and turns."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import pytest

from runtime.engine import Runtime
from runtime.messages import DropPolicy, QueueMode, QueueStatus
from runtime.results import RuntimeSettings
from runtime.scheduler import SubmitStatus
from tests.fakes.anthropic_api import FakeAnthropic, text
from tests.runtime.helpers import open_runtime, operator

ENDED = {QueueStatus.PROCESSED, QueueStatus.INTERJECTED, QueueStatus.DROPPED}


async def _bursts(rt: Runtime, sid: str, cap: int, seed: int) -> tuple[set[str], set[str]]:
    """Bursts of concurrent submits with random gaps while turns start and end: the ids the
    callers were told were dropped, and every id submitted. Checks the cap after each one."""
    rng = random.Random(seed)
    told_dropped: set[str] = set()
    submitted: set[str] = set()
    session = rt.sessions[sid]
    for burst in range(12):
        size = rng.randint(1, 2 * cap + 2)
        results = await asyncio.gather(
            *(rt.submit(sid, operator(f"b{burst}-{n}")) for n in range(size))
        )
        assert len(session.queue) <= cap, "the queue passed its cap"
        for result in results:
            submitted.add(result.message_id)
            told_dropped.update(result.dropped_message_ids)
        await asyncio.sleep(rng.choice([0, 0, 0.001, 0.005]))
    return told_dropped, submitted


@pytest.mark.parametrize("cap", [1, 2, 3])
@pytest.mark.parametrize("policy", [DropPolicy.OLDEST, DropPolicy.NEWEST])
@pytest.mark.parametrize("mode", [QueueMode.FOLLOWUP, QueueMode.STEER])
async def test_bursts_at_the_cap_never_wedge_and_never_run_a_dropped_message(
    anthropic_api: FakeAnthropic,
    db_path: Path | str,
    cleanup: list[object],
    cap: int,
    policy: DropPolicy,
    mode: QueueMode,
) -> None:
    anthropic_api.responder = lambda body: text("done")
    settings = RuntimeSettings(default_queue_mode=mode, queue_cap=cap, drop_policy=policy)
    rt = await open_runtime(db_path, anthropic_api, settings=settings)
    cleanup.append(rt)
    sid = await rt.create_session("assistant")

    told_dropped, submitted = await _bursts(rt, sid, cap, seed=cap * 10 + len(policy))
    await asyncio.wait_for(rt.wait_idle(sid), 30)

    messages = {m.id: m for m in await rt.store.messages(session_id=sid)}
    assert set(messages) == submitted
    stored_dropped = {i for i, m in messages.items() if m.status is QueueStatus.DROPPED}
    assert told_dropped == stored_dropped, "the callers were told what the store says"
    assert told_dropped, "the bursts reached the cap"
    assert {m.status for m in messages.values()} <= ENDED, "nothing is left waiting"
    assert all(messages[i].run_id is None for i in stored_dropped), "a dropped message ran"
    assert len(rt.sessions[sid].queue) == 0

    # The session still works: a message after the storm gets its own turn.
    anthropic_api.responder = lambda body: text("still here")
    last = await rt.submit(sid, operator("are you there?"))
    assert last.status is SubmitStatus.QUEUED
    await asyncio.wait_for(rt.wait_idle(sid), 10)
    runs = await rt.store.runs(session_id=sid)
    assert runs[-1].final_text == "still here"
    assert anthropic_api.refused == []
