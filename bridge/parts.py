"""A process composed from parts, as aiohttp's `cleanup_ctx` composes an application: each
part's life is one async context (what opens it, `yield`, what closes it: side by side), the
parts open in order and close in reverse, and a reload walks the same list. A part that fails
to close is logged and named at the end; the parts after it still close."""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable, Iterable
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from dataclasses import dataclass, field

from config.diff import ReloadReport
from config.errors import SwitchboardError
from config.schema import SwitchboardConfig

log = logging.getLogger(__name__)

Step = Callable[[], Awaitable[None]]
Life = Callable[[], AbstractAsyncContextManager[object]]


@dataclass(frozen=True)
class Change:
    """A reload on its way through the parts, in their order: the config running `before`,
    the one to run `after` (a part before `config` sees it first), what differs, and what did
    not take (each part adds its own: a bot that did not start)."""

    before: SwitchboardConfig
    after: SwitchboardConfig
    report: ReloadReport
    failures: list[str] = field(default_factory=list)


Reconfigure = Callable[[Change], Awaitable[None] | None]


@dataclass(frozen=True)
class Part:
    """One part of the process and its life.

    `open`: at start, until the stop (what must close whether the part ran or not closes
    here). `run`: once every part is open, until the stop, where a part's `run` ends before
    its `open` does. `once`: what runs on one replica of the fleet at a time, the one holding
    the `active` lease (one process: at once, after its `run`). `reconfigure`: a reload, in
    the parts' order."""

    name: str
    open: Life | None = None
    run: Life | None = None
    reconfigure: Reconfigure | None = None
    once: Life | None = None


class Refused(SwitchboardError):
    """A part refuses the new config before changing anything: the parts after it are not
    reconfigured (a part that refuses comes before any part that changes)."""


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
    """The parts opened so far, in order: run, reconfigured, and closed in reverse."""

    def __init__(self) -> None:
        self._opened: list[tuple[Part, AsyncExitStack]] = []

    async def open_all(self, parts: Iterable[Part]) -> None:
        """Open each of `parts` in turn (each taken once those before it are open, so it may
        use what they built). The error of one that raises names it, and it is not closed: its
        open undoes its own half-way; `close` closes those before it."""
        for part in parts:
            stack = AsyncExitStack()
            try:
                if part.open is not None:
                    await stack.enter_async_context(part.open())
            except BaseException as exc:
                exc.add_note(f"while the part {part.name!r} opened")  # in its traceback
                raise
            self._opened.append((part, stack))

    async def activate(self) -> None:
        """Every opened part's `run`, in order."""
        for part, stack in list(self._opened):
            if part.run is not None:
                await stack.enter_async_context(part.run())

    async def lead(self) -> None:
        """Every opened part's `once`, in order: this process does the fleet's once now."""
        for part, stack in list(self._opened):
            if part.once is not None:
                await stack.enter_async_context(part.once())

    async def reconfigure(self, change: Change) -> None:
        """Every opened part's `reconfigure`, in order (`Refused` stops the walk)."""
        for part, _ in list(self._opened):
            if part.reconfigure is not None and inspect.isawaitable(
                done := part.reconfigure(change)
            ):
                await done

    async def close(self) -> None:
        """Every opened part, newest first; raises `StopFailed` naming those that failed."""
        failed: list[tuple[str, Exception]] = []
        cancelled: BaseException | None = None
        opened, self._opened = self._opened, []
        for part, stack in reversed(opened):
            try:
                await stack.aclose()
            except asyncio.CancelledError as exc:  # the others still close, then it goes on
                cancelled = cancelled or exc
            except Exception as exc:
                log.error(
                    "part failed to stop; the others stop",
                    exc_info=True,
                    extra={"part": part.name},
                )
                failed.append((part.name, exc))
            else:
                log.debug("part stopped", extra={"part": part.name})
        if cancelled is not None:
            raise cancelled
        if failed:
            raise StopFailed(failed)
