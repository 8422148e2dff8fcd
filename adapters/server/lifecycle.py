"""A process composed from parts, as aiohttp's `cleanup_ctx` composes an application: each
part opens in order and closes in reverse (an `AsyncExitStack`). A part that fails to close is
logged and named at the end; the parts after it still close."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from types import TracebackType

from config.errors import SwitchboardError

log = logging.getLogger(__name__)

Step = Callable[[], Awaitable[None]]


async def _nothing() -> None:
    return None


@dataclass(frozen=True)
class Part:
    """One part of the process and what it does at each point of its life.

    `open`: at start, on every replica. `activate`: once this process runs the turns (at
    once on SQLite; on PostgreSQL when it takes the lease). `close`: at stop, whether it was
    activated or not, so each close does nothing for what never started."""

    name: str
    open: Step = _nothing
    activate: Step = _nothing
    close: Step = _nothing

    async def __aenter__(self) -> Part:
        await self.open()
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()


class StopFailed(SwitchboardError):
    """Parts that raised while closing (each logged with its traceback); every other part
    closed."""

    def __init__(self, failed: list[tuple[str, Exception]]) -> None:
        self.failed = failed
        named = ", ".join(f"{name} ({type(error).__name__})" for name, error in failed)
        super().__init__(
            f"{named} failed to stop; every other part stopped (the log has the details)"
        )


class Parts:
    """The parts opened so far, closed in reverse by `close`."""

    def __init__(self) -> None:
        self._stack = AsyncExitStack()
        self._opened: list[Part] = []
        self._failed: list[tuple[str, Exception]] = []

    async def open(self, part: Part) -> None:
        """Open `part`; if it raises, it is not closed (the parts before it are, by `close`)."""
        await self._stack.enter_async_context(_Collected(part, self._failed))
        self._opened.append(part)

    async def activate(self) -> None:
        """Every opened part, in order: this process runs the turns now."""
        for part in self._opened:
            await part.activate()

    async def close(self) -> None:
        """Every opened part, newest first; raises `StopFailed` naming those that failed."""
        self._opened.clear()
        await self._stack.aclose()
        failed, self._failed = self._failed, []
        if failed:
            raise StopFailed(failed)


class _Collected:
    """A part whose close does not raise: its error is logged and kept for `Parts.close`."""

    def __init__(self, part: Part, failed: list[tuple[str, Exception]]) -> None:
        self._part = part
        self._failed = failed

    async def __aenter__(self) -> Part:
        return await self._part.__aenter__()

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        name = self._part.name
        try:
            await self._part.__aexit__(kind, error, traceback)
        except Exception as exc:
            log.error("part failed to stop; the others stop", exc_info=True, extra={"part": name})
            self._failed.append((name, exc))
        else:
            log.debug("part stopped", extra={"part": name})
