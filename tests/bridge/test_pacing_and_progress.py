"""Send pacing and the progress presenter, on a manual clock: no real waiting."""

from __future__ import annotations

import asyncio

from bridge import Platform, Route
from bridge.progress import ProgressPresenter
from bridge.ratelimit import RateLimiter
from runtime import ManualClock
from tests.bridge.fakes import RecordingTransport

ROUTE = Route(platform=Platform.TELEGRAM, workspace_id="acme", conversation_id="1")


async def test_rate_limiter_spaces_sends_per_conversation_and_overall() -> None:
    clock = ManualClock()
    limiter = RateLimiter(clock, per_conversation_interval_s=1.0, global_per_second=4.0)
    start = clock.monotonic()
    times: dict[str, list[float]] = {"a": [], "b": []}

    async def send(key: str) -> None:
        await limiter.acquire(key)
        times[key].append(clock.monotonic() - start)

    tasks = [asyncio.create_task(send(k)) for k in ("a", "a", "a", "b", "b")]
    await asyncio.sleep(0)
    for _ in range(40):
        await clock.advance(0.125)
    await asyncio.gather(*tasks)
    assert times["a"] == [0.0, 1.0, 2.0], "one per second in a conversation"
    assert times["b"] == [0.25, 1.25], "and at most four per second overall"


async def test_retry_after_holds_back_everything_until_it_passes() -> None:
    clock = ManualClock()
    limiter = RateLimiter(clock, per_conversation_interval_s=0.0, global_per_second=0.0)
    limiter.back_off("a", 5.0)
    waiter = asyncio.create_task(limiter.acquire("b"))
    await clock.advance(4.9)
    assert not waiter.done()
    await clock.advance(0.2)
    assert waiter.done()


async def test_progress_is_shown_at_once_then_on_change_and_refreshed() -> None:
    clock = ManualClock()
    transport = RecordingTransport()
    presenter = ProgressPresenter(
        {Platform.TELEGRAM: transport}, clock, interval_s=4.0, min_gap_s=1.0
    )
    presenter.update(ROUTE, "run_1", "model round 1", 0.0)
    await clock.advance(0)
    assert [v.step for v in transport.progress if v] == ["model round 1"]
    presenter.update(ROUTE, "run_1", "running sleep", 0.2)
    await clock.advance(0.5)
    assert len(transport.progress) == 1, "not more often than min_gap_s"
    await clock.advance(0.5)
    assert [v.step for v in transport.progress if v][-1] == "running sleep"
    await clock.advance(1.0)
    await clock.advance(3.0)
    steps = [v for v in transport.progress if v]
    assert len(steps) == 3 and steps[-1].elapsed_s == 5.0, "refreshed while nothing changes"
    await presenter.note("run_1", "(your message reached the agent)")
    assert transport.progress[-1] is not None and transport.progress[-1].note
    await presenter.finish("run_1")
    assert transport.progress[-1] is None, "cleared when the turn ends"
