"""cancel_and_wait: the one way every layer stops its background tasks."""

from __future__ import annotations

import asyncio
import logging

import pytest

from runtime.tasks import cancel_and_wait


async def test_each_task_is_cancelled_and_has_ended_when_it_returns() -> None:
    cleaned: list[str] = []

    async def forever(name: str) -> None:
        try:
            await asyncio.Event().wait()
        finally:
            await asyncio.sleep(0)  # its clean-up takes a step of its own
            cleaned.append(name)

    tasks = [asyncio.create_task(forever(n)) for n in ("a", "b")]
    await asyncio.sleep(0)
    await cancel_and_wait(tasks[0], None, tasks[1])
    assert all(t.cancelled() for t in tasks)
    assert sorted(cleaned) == ["a", "b"]


async def test_nothing_to_stop_is_no_work() -> None:
    await cancel_and_wait()
    await cancel_and_wait(None)


async def test_a_task_that_failed_is_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    async def fails() -> None:
        raise RuntimeError("boom")

    failed = asyncio.create_task(fails(), name="failing")
    await asyncio.sleep(0)
    with caplog.at_level(logging.WARNING, logger="runtime.tasks"):
        await cancel_and_wait(failed)
    [record] = [r for r in caplog.records if r.name == "runtime.tasks"]
    assert record.__dict__["task"] == "failing" and "boom" in record.__dict__["error"]


async def test_the_callers_own_cancellation_is_raised() -> None:
    release = asyncio.Event()

    async def slow_to_stop() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            await release.wait()

    stubborn = asyncio.create_task(slow_to_stop())
    await asyncio.sleep(0)
    stopping = asyncio.create_task(cancel_and_wait(stubborn))
    await asyncio.sleep(0)
    stopping.cancel()  # (a `suppress(CancelledError)` around `await task` would eat this)
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await stopping
    assert stubborn.done()
