"""The inbox file (`inbox.py`) as this process's intake: on SQLite, what the door process
stores there, and what this process's own ways in store (its doors when it serves the port
itself, Socket Mode, polling), is read here and handed on."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from adapters.intake.inbox import InboxReader, InboxWriter
from adapters.intake.record import Arrival
from bridge.store import StoredRequest


class LocalIntake:
    def __init__(self, path: Path, committed: Callable[[int], None]) -> None:
        """`committed` hears of each commit of this process's own (with its size)."""
        self.path = path
        self._reader = InboxReader(path)
        self._writer = InboxWriter(path, committed)

    async def put(self, arrival: Arrival) -> bool:
        return await self._writer.put(arrival)

    async def pending(self, after_id: int, limit: int) -> list[StoredRequest]:
        return await self._reader.pending(after_id, limit)

    async def done(self, ids: list[int]) -> None:
        await self._reader.done(ids)

    async def failed(self, request_id: int, error: str) -> None:
        await self._reader.failed(request_id, error)

    def close(self) -> None:
        self._writer.close()
        self._reader.close()
