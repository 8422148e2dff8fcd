"""The door process's pass-through to the main process, as a stop begins: a stream it is
passing on is cut, and so is one whose answer from the main process arrives only after the
stop began (counted once it had arrived, it was missed, and the stop waited for the tab)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp
from aiohttp import web

from adapters.doors.proxy import Proxy


async def test_a_stream_answered_after_the_stop_began_is_cut(tmp_path: Path) -> None:
    asked, answer = asyncio.Event(), asyncio.Event()

    async def endless(request: web.Request) -> web.StreamResponse:
        """The main process's live feed: its answer held until the test says, then forever."""
        asked.set()
        await answer.wait()
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        while True:
            await response.write(b"data: []\n\n")
            await asyncio.sleep(0.05)

    main = web.Application()
    main.router.add_get("/live", endless)
    main_runner = web.AppRunner(main, shutdown_timeout=1)
    await main_runner.setup()
    socket = tmp_path / "main.sock"
    await web.UnixSite(main_runner, str(socket)).start()

    proxy = Proxy(socket)
    door = web.Application()
    door.router.add_route("*", "/{tail:.*}", proxy.handle)
    door.on_shutdown.append(proxy.end_streams)
    door_runner = web.AppRunner(door)
    await door_runner.setup()
    site = web.TCPSite(door_runner, "127.0.0.1", 0)
    await site.start()
    port = door_runner.addresses[0][1]
    try:
        async with aiohttp.ClientSession() as client:

            async def read() -> tuple[int, bytes]:
                async with client.get(f"http://127.0.0.1:{port}/live") as response:
                    return response.status, await response.content.read()

            reading = asyncio.create_task(read())
            async with asyncio.timeout(10):
                await asked.wait()
            await door.shutdown()  # the door process's stop begins: its streams are cut
            answer.set()
            async with asyncio.timeout(10):
                status, body = await reading
            assert status == 503 and b"data: " not in body, (status, body[:80])
    finally:
        await door_runner.cleanup()
        await proxy.close()
        await main_runner.cleanup()
