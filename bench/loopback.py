"""Serving a fake platform API on a free loopback port, for the benchmarks."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from aiohttp import web

if TYPE_CHECKING:
    from adapters.server.app import App


async def serve(app: web.Application) -> tuple[web.AppRunner, str]:
    """The started runner (clean it up when done) and the base URL it answers on."""
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    return runner, f"http://127.0.0.1:{runner.addresses[0][1]}"


async def handed_on(app: App, count: int, wait_s: float = 60.0) -> None:
    """Until `count` prompts are in the runtime's store: acknowledged requests are stored in
    the intake first and handed on by the replay a moment later."""
    deadline = time.monotonic() + wait_s
    while len(await app.runtime.store.messages()) < count:
        if time.monotonic() > deadline:
            raise AssertionError(f"not handed on within {wait_s:g} s")
        await asyncio.sleep(0.1)  # reading every message is not free: not too often
