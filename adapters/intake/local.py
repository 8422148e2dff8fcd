"""The inbox file (`inbox.py`) as this process's intake: on SQLite, what the door process
stores there, and what this process's own ways in store (its doors when it serves the port
itself, Socket Mode, polling), is read here and handed on. With a door process, what was
handed on is removed by it (told over its socket pair), so that it alone writes the file its
acknowledgements wait on; while it is not running, by this process."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from adapters.intake.inbox import InboxReader, InboxWriter
from adapters.intake.record import Arrival
from bridge.store.records import StoredRequest


class LocalIntake:
    def __init__(self, path: Path, committed: Callable[[int], None]) -> None:
        """`committed` hears of each commit of this process's own (with its size)."""
        self.path = path
        self._reader = InboxReader(path)
        self._writer = InboxWriter(path, committed)
        self._tell: Callable[..., bool] = lambda **message: False

    def write_through(self, tell: Callable[..., Any]) -> None:
        """The door process writes the file: `tell(handled=ids)` or `tell(replay_failed=[id,
        error])` tells it what to write; False when it is not running."""
        self._tell = tell

    async def put(self, arrival: Arrival) -> bool:
        return await self._writer.put(arrival)

    async def pending(self, after_id: int, limit: int) -> list[StoredRequest]:
        return await self._reader.pending(after_id, limit)

    async def done(self, ids: list[int]) -> None:
        if not self._tell(handled=ids):
            await self._writer.forget(ids)

    async def failed(self, request_id: int, error: str) -> None:
        if not self._tell(replay_failed=[request_id, error]):
            await self._writer.count_failure(request_id, error)

    def close(self) -> None:
        self._writer.close()
        self._reader.close()
