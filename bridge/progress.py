"""The live state of running turns, shown through each adapter and never queued behind real
messages (DESIGN §3, Progress).

One task per running turn shows its state: at once, then on each change (at most one show per
`min_gap_s`) and at least every `interval_s` (typing actions expire, elapsed time moves); when
the turn ends it clears it, before the next turn in the same conversation shows its own. Each
show spends from the platform's pacing budget, shared with the replies on worse terms (see
`bridge.ratelimit`): a call there is no room for now is skipped, not waited for, and the newest
state is shown once there is room. Updates are coalesced, never queued.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

from bridge.ratelimit import PacedTransports
from bridge.transport import Call, ProgressView
from bridge.types import Route
from runtime.clock import Clock

log = logging.getLogger(__name__)

CLEAR_WITHIN_S = 30.0  # a clear the budget has no room for is tried again until then
RETRY_FLOOR_S = 0.25  # no sooner than this after the budget had no room (a reply waited)


@dataclass(slots=True)
class _Live:
    route: Route
    run_id: str
    step: str
    started: float  # monotonic
    note: str | None = None  # not shown yet
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    ended: asyncio.Event = field(default_factory=asyncio.Event)


class ProgressPresenter:
    def __init__(
        self,
        transports: PacedTransports,
        clock: Clock,
        interval_s: float = 4.0,
        min_gap_s: float = 1.0,
    ) -> None:
        self._transports = transports
        self._clock = clock
        self._interval = interval_s
        self._min_gap = min_gap_s
        self._live: dict[str, _Live] = {}  # by run id
        self._latest: dict[str, asyncio.Task[None]] = {}  # by conversation: its newest turn's
        self._tasks: set[asyncio.Task[None]] = set()
        self._closing = asyncio.Event()

    def update(self, route: Route, run_id: str, step: str, elapsed_s: float) -> None:
        if self._closing.is_set():
            return
        live = self._live.get(run_id)
        if live is None:
            live = _Live(route, run_id, step, self._clock.monotonic() - elapsed_s)
            self._live[run_id] = live
            key = route.conversation_key
            task = asyncio.get_running_loop().create_task(
                self._run(live, self._latest.get(key)), name=f"progress-{run_id}"
            )
            self._latest[key] = task
            self._tasks.add(task)
            task.add_done_callback(lambda t: self._done(key, t))
        elif step != live.step:
            live.step = step
            live.changed.set()

    async def note(self, run_id: str, text: str) -> None:
        """A one-off line under the step, shown with the next update."""
        live = self._live.get(run_id)
        if live is not None:
            live.note = text
            live.changed.set()

    async def finish(self, run_id: str) -> None:
        """The turn ended: its progress is cleared, in the background (this never waits)."""
        live = self._live.pop(run_id, None)
        if live is not None:
            live.ended.set()

    async def close(self) -> None:
        """Clear what is shown where the budget allows at once, and stop."""
        self._closing.set()
        for live in self._live.values():
            live.ended.set()
        self._live.clear()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def _done(self, key: str, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if self._latest.get(key) is task:
            del self._latest[key]

    async def _run(self, live: _Live, before: asyncio.Task[None] | None) -> None:
        if before is not None:
            await asyncio.wait({before})  # the previous turn here clears its progress first
        while not live.ended.is_set():
            live.changed.clear()
            view = self._view(live)
            shown, ready = await self._show(live.route, view)
            now = self._clock.monotonic()
            if shown:
                if live.note == view.note:
                    live.note = None
                soonest, latest = now + self._min_gap, now + self._interval
            else:  # no room now: the newest state, once there is
                soonest = latest = max(now + RETRY_FLOOR_S, ready)
            await self._until(soonest, live.ended)
            await self._until(latest, live.ended, live.changed)
        if live.note is not None:  # a note that came as the turn ended is still told, once
            await self._show(live.route, self._view(live))
        deadline = self._clock.monotonic() + CLEAR_WITHIN_S
        while True:
            cleared, ready = await self._show(live.route, None)
            if cleared or self._closing.is_set():
                return
            at = max(self._clock.monotonic() + RETRY_FLOOR_S, ready)
            if at > deadline:
                log.info(
                    "progress left shown: no room to clear it",
                    extra={"conversation": live.route.conversation_key},
                )
                return
            await self._until(at, self._closing)

    def _view(self, live: _Live) -> ProgressView:
        elapsed = round(self._clock.monotonic() - live.started, 1)
        return ProgressView(live.run_id, live.step, elapsed, live.note)

    async def _show(self, route: Route, view: ProgressView | None) -> tuple[bool, float]:
        """Show (None: clear) within the budget: whether it all went, and if not, when the
        budget should have room for what did not."""
        transport = self._transports.get(route.platform)
        if transport is None:
            return True, 0.0
        budget = self._transports.budget(route)
        try:
            await transport.show_progress(route, view, budget)
        except Exception:  # progress is best effort; a failure must not touch the turn
            log.warning(
                "progress update failed",
                exc_info=True,
                extra={"conversation": route.conversation_key},
            )
            return True, 0.0
        finally:
            budget.done()
        # A skipped typing action or status line is not worth showing again before the next
        # update (that would edit the message again); anything skipped in a clear is.
        skipped = budget.refused - {Call.INDICATOR} if view is not None else budget.refused
        return not skipped, budget.ready_at(skipped)

    async def _until(self, at: float, *events: asyncio.Event) -> None:
        """Sleep on the clock until `at`, or until one of `events` is set."""
        delay = at - self._clock.monotonic()
        if delay <= 0 or any(e.is_set() for e in events):
            return
        waiters = [asyncio.ensure_future(e.wait()) for e in events]
        timer = asyncio.ensure_future(self._clock.sleep(delay))
        try:
            await asyncio.wait({timer, *waiters}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for future in (timer, *waiters):
                future.cancel()
