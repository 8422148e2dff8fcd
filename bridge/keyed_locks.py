"""One asyncio lock per key, kept only while someone holds or waits for it: for a
check-then-create across an await (a conversation's first session, an automation's start),
so the check is made again by whoever comes second, after the first has applied its effect."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Hashable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)


@dataclass(slots=True)
class _Held:
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    users: int = 0


class KeyedLocks(Generic[K]):
    __slots__ = ("_held",)

    def __init__(self) -> None:
        self._held: dict[K, _Held] = {}

    @asynccontextmanager
    async def hold(self, key: K) -> AsyncIterator[None]:
        held = self._held.setdefault(key, _Held())
        held.users += 1
        try:
            async with held.lock:
                yield
        finally:
            held.users -= 1
            if not held.users:
                del self._held[key]

    def __len__(self) -> int:
        return len(self._held)
