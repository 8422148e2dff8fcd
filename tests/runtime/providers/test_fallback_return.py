"""A session's way back from its fallback (runtime/providers/fallback.py, `turn_starts`):
only at a turn's start, only to a candidate that answered a probe or real traffic, and at
most one probe a candidate per interval whichever session asks."""

from __future__ import annotations

from runtime.clock import ManualClock
from runtime.errors import ProviderError
from runtime.providers.cooldowns import State
from tests.runtime.providers.test_fallback_chain import (
    HANG,
    OVERLOADED,
    Scripted,
    chain_of,
    request,
)


async def test_a_session_returns_at_a_turn_start_once_the_primary_answers_a_probe() -> None:
    clock = ManualClock()
    first, second = Scripted("a", OVERLOADED), Scripted("b")
    chain = chain_of(first, second, clock=clock)
    session = chain.for_session("s1")
    await session.complete(request(), print, print)
    assert (await chain.turn_starts("s1")).model == "b", "still open: no probe sent"
    assert len(first.requests) == 1
    await clock.advance(10)
    await session.complete(request(), print, print)
    assert len(first.requests) == 1 and session.model == "b", "never back mid-turn"
    assert (await chain.turn_starts("s1")).model == "a"
    probe = first.requests[-1]
    assert probe.max_tokens == 1 and probe.tools == [] and probe.model == "a"
    assert [b.text for m in probe.messages for b in m.blocks] == ["ping"]  # type: ignore[union-attr]
    await session.complete(request(), print, print)
    assert len(first.requests) == 3 and session.model == "a"
    assert chain.snapshot().switches[("p1:b", "p0:a", "recovered")] == 1
    assert chain.snapshot().sessions == {}


async def test_a_failed_probe_keeps_the_session_where_it_is_and_opens_the_circuit_longer() -> None:
    clock = ManualClock()
    first, second = Scripted("a", OVERLOADED, OVERLOADED), Scripted("b")
    chain = chain_of(first, second, clock=clock)
    await chain.for_session("s1").complete(request(), print, print)
    await clock.advance(10)
    assert (await chain.turn_starts("s1")).model == "b"
    assert chain.health.state(chain.candidates[0]) is State.OPEN
    assert chain.health.back_in(chain.candidates[0]) == 20


async def test_one_probe_per_interval_whichever_session_asks() -> None:
    clock = ManualClock()
    limited = ProviderError("rate limited", status=429, retry_after=5)
    first, second = Scripted("a", limited, limited), Scripted("b")
    chain = chain_of(first, second, clock=clock, probe_interval_s=60)
    for sid in ("s1", "s2"):
        await chain.for_session(sid).complete(request(), print, print)
    assert len(first.requests) == 1, "s2 skipped the cooling primary"
    await clock.advance(5)
    assert (await chain.turn_starts("s1")).model == "b", "the probe was rate limited"
    await clock.advance(5)
    assert (await chain.turn_starts("s2")).model == "b", "no second probe within the interval"
    assert len(first.requests) == 2
    await clock.advance(54)
    assert (await chain.turn_starts("s2")).model == "b", "59 s since the last probe"
    await clock.advance(1)
    assert (await chain.turn_starts("s2")).model == "a"
    assert (await chain.turn_starts("s1")).model == "a", "answered: as good as a probe"
    assert len(first.requests) == 3


async def test_real_traffic_answered_for_another_session_counts_as_a_probe() -> None:
    clock = ManualClock()
    first, second = Scripted("a", OVERLOADED), Scripted("b")
    chain = chain_of(first, second, clock=clock)
    await chain.for_session("s1").complete(request(), print, print)
    await clock.advance(10)
    await chain.for_session("s2").complete(request(), print, print)  # its half-open probe
    assert chain.current("s2").model == "a" and len(first.requests) == 2
    assert (await chain.turn_starts("s1")).model == "a"
    assert len(first.requests) == 2, "no probe needed"


async def test_a_probe_that_does_not_answer_in_time_leaves_the_session_on_its_fallback() -> None:
    clock = ManualClock()
    first, second = Scripted("a", OVERLOADED, HANG), Scripted("b")
    chain = chain_of(first, second, clock=clock, probe_timeout_s=0.05)
    await chain.for_session("s1").complete(request(), print, print)
    await clock.advance(10)
    assert (await chain.turn_starts("s1")).model == "b"
    assert chain.health.state(chain.candidates[0]) is State.OPEN


async def test_a_session_returns_to_the_best_candidate_that_answers() -> None:
    clock = ManualClock()
    a, b, c = Scripted("a", OVERLOADED), Scripted("b", OVERLOADED), Scripted("c")
    chain = chain_of(a, b, c, clock=clock)
    await chain.for_session("s1").complete(request(), print, print)
    assert chain.current("s1").model == "c"
    chain.health.failed(chain.candidates[0], ProviderError("key refused", status=401))
    await clock.advance(10)
    assert (await chain.turn_starts("s1")).model == "b", "a is disabled; b answers"
    chain.forget("s1")  # the session closed: a new one starts on the primary
    assert chain.current("s1").model == "a"


async def test_a_heartbeat_session_returns_only_to_a_candidate_it_may_use() -> None:
    clock = ManualClock()
    a, dear, cheap = Scripted("a", OVERLOADED), Scripted("dear"), Scripted("cheap")
    chain = chain_of(a, dear, cheap, prices=[3.0, 15.0, 1.0], clock=clock, allow_costlier=True)
    await chain.for_session("beat", cheaper_only=True).complete(request(), print, print)
    await chain.for_session("ops").complete(request(), print, print)
    assert (chain.current("beat").model, chain.current("ops").model) == ("cheap", "dear")
    chain.health.failed(chain.candidates[0], ProviderError("key refused", status=401))
    assert (await chain.turn_starts("beat", cheaper_only=True)).model == "cheap"
    assert chain.snapshot().sessions["beat"] == "p2:cheap"
