"""The live state of running turns, shown through each adapter and never queued behind
real messages: the first view at once, then a refresh every `interval_s` (typing actions
expire, elapsed time moves) until the turn ends."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field

from bridge.transport import ProgressView, Transport
from bridge.types import Platform, Route
from runtime.clock import Clock

log = logging.getLogger(__name__)


@dataclass(slots=True)
class _Live:
    route: Route
    run_id: str
    step: str
    started: float  # monotonic
    task: asyncio.Task[None] | None = None
    changed: asyncio.Event = field(default_factory=asyncio.Event)


class ProgressPresenter:
    def __init__(
        self,
        transports: Mapping[Platform, Transport],
        clock: Clock,
        interval_s: float = 4.0,
        min_gap_s: float = 1.0,
    ) -> None:
        self._transports = transports
        self._clock = clock
        self._interval = interval_s
        self._min_gap = min_gap_s
        self._live: dict[str, _Live] = {}  # by run id

    def update(self, route: Route, run_id: str, step: str, elapsed_s: float) -> None:
        live = self._live.get(run_id)
        if live is None:
            live = _Live(route, run_id, step, self._clock.monotonic() - elapsed_s)
            self._live[run_id] = live
            live.task = asyncio.get_running_loop().create_task(self._refresh(live))
        if step != live.step:
            live.step = step
            live.changed.set()

    async def note(self, run_id: str, text: str) -> None:
        live = self._live.get(run_id)
        if live is not None:
            await self._send(live.route, self._view(live, note=text))

    async def finish(self, run_id: str) -> None:
        live = self._live.pop(run_id, None)
        if live is None:
            return
        if live.task is not None:
            live.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await live.task
        await self._send(live.route, None)

    async def close(self) -> None:
        for run_id in list(self._live):
            await self.finish(run_id)

    def _view(self, live: _Live, note: str | None = None) -> ProgressView:
        elapsed = round(self._clock.monotonic() - live.started, 1)
        return ProgressView(live.run_id, live.step, elapsed, note)

    async def _refresh(self, live: _Live) -> None:
        """Show now; then on each step change (at most one show per `min_gap_s`), and at
        least every `interval_s` so that typing indicators and elapsed times stay fresh."""
        while True:
            live.changed.clear()
            await self._send(live.route, self._view(live))
            await self._clock.sleep(self._min_gap)
            changed = asyncio.ensure_future(live.changed.wait())
            tick = asyncio.ensure_future(self._clock.sleep(self._interval - self._min_gap))
            try:
                await asyncio.wait({changed, tick}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                changed.cancel()
                tick.cancel()

    async def _send(self, route: Route, view: ProgressView | None) -> None:
        transport = self._transports.get(route.platform)
        if transport is None:
            return
        try:
            await transport.show_progress(route, view)
        except Exception:  # progress is best effort; a failure must not touch the turn
            log.warning(
                "progress update failed",
                exc_info=True,
                extra={"conversation": route.conversation_key},
            )
