"""A stop that comes before a turn's next in-flight part starts (a round of tool calls, a model
call) ends the turn without leaving that part's cancellation unread: the event loop is not
told of a "Future exception was never retrieved", which the terminal console's line editor
prints over the chat as "Unhandled exception in event loop" and "Press ENTER to continue"."""

from __future__ import annotations

import asyncio
import gc
from typing import Any

import pytest

from runtime.session import HandedBack, RunHandle, TurnStopped


async def a_call() -> str:
    await asyncio.sleep(5)
    return "done"


@pytest.mark.parametrize("how", ["stopped", "handed back"])
async def test_a_round_cut_before_it_starts_leaves_nothing_unread(how: str) -> None:
    loop = asyncio.get_running_loop()
    told: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _, context: told.append(context))
    handle = RunHandle(run_id="run_1", started_at=0.0, message_ids=[])
    if how == "stopped":
        handle.request_stop("operator")
    else:
        handle.request_hand_back()
    try:
        with pytest.raises(TurnStopped if how == "stopped" else HandedBack):
            await handle.inflight_op(asyncio.gather(a_call(), a_call()), cut_safely=True)
        for _ in range(5):  # the calls' cancellation runs its course
            await asyncio.sleep(0)
        gc.collect()
        await asyncio.sleep(0)
        assert told == []
    finally:
        loop.set_exception_handler(None)
