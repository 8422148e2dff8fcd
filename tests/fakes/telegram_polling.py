"""getUpdates as Telegram serves it to two bot instances: a second poll while one is waiting
ends the first with 409 ("Conflict: terminated by other getUpdates request"). A poll whose
client has gone (a killed process) is not counted."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

CONFLICT = (
    "Conflict: terminated by other getUpdates request; make sure that only one bot instance"
    " is running"
)


@dataclass
class Pollers:
    # getUpdates calls waiting now, each with the event that ends it with 409
    waiting: list[tuple[web.Request, asyncio.Event]] = field(default_factory=list)
    conflicts: int = 0  # 409s given because two pollers overlapped: two bot instances

    async def serve(self, request: web.Request, updates: Awaitable[Any]) -> tuple[int, Any]:
        """(200, the updates) or (409, the conflict's description)."""
        for other, conflict in self.waiting:
            if other.transport is not None and not other.transport.is_closing():
                self.conflicts += 1
                conflict.set()
        conflict = asyncio.Event()
        self.waiting.append((request, conflict))
        answer = asyncio.ensure_future(updates)
        ended = asyncio.ensure_future(conflict.wait())
        try:
            await asyncio.wait({answer, ended}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            self.waiting.remove((request, conflict))
            ended.cancel()
        if not answer.done():
            answer.cancel()
            return 409, CONFLICT
        return 200, answer.result()
