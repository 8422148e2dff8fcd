"""The live state of running turns, shown through each adapter and never queued behind real
messages (DESIGN §3, Progress).

One task per running turn shows its state: at once, then on each change (at most one show per
`min_gap_s`) and at least every `interval_s` (typing actions expire, elapsed time moves); when
the turn ends it clears it, before the next turn in the same conversation shows its own. Each
show spends from the platform's pacing budget, shared with the replies on worse terms (see
`bridge.ratelimit`): a call there is no room for now is skipped, not waited for, and the newest
state is shown once there is room. Updates are coalesced, never queued; a transport that
prints lines with no rate limit (a terminal: `ProgressLog`) is also told every step and note
at once, in order.

The answer streams in the same view (`ProgressView.answer`): the first words are shown at
once, not after `min_gap_s`, and then the newest text with each update. The transport shows it
where the platform can (a draft in a Telegram private chat, a Slack stream in an assistant
thread, else in the progress message itself); the complete answer still goes through the
outbox, and the preview is cleared like any progress. A stopped turn's partial answer stays
shown, marked stopped. The preview masks the process's secrets, and holds back an end that
could be the start of one, so none shows a piece at a time. The messages progress shows are
recorded in the bridge store as each call that posts one returns (`Budget.posted`), so that
a crash, even in the middle of an update, cannot leave a half-streamed preview behind: `sweep`
removes them on the next start.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace

from bridge.placement import Placement
from bridge.platforms import Platforms
from bridge.store.store import BridgeStore
from bridge.transport import Call, LiveMessages, ProgressLog, ProgressView
from bridge.types import Route
from config.secrets import Secrets
from runtime.clock import Clock

log = logging.getLogger(__name__)

CLEAR_WITHIN_S = 30.0  # a clear the budget has no room for is tried again until then
SETTLE_S = 5.0  # the longest the end of a turn waits for a progress call in flight
RETRY_FLOOR_S = 0.25  # no sooner than this after the budget had no room (a reply waited)


@dataclass(slots=True)
class _Live:
    route: Route
    run_id: str
    step: str
    started: float  # monotonic
    note: str | None = None  # not shown yet
    answer: str = ""  # streamed so far, in the current round
    round_over: bool = False  # the next words start a new round's answer
    stopped: bool = False
    recorded: frozenset[str] = frozenset()  # live message ids, as the store has them
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    first_words: asyncio.Event = field(default_factory=asyncio.Event)  # shown without a gap
    ended: asyncio.Event = field(default_factory=asyncio.Event)
    quiet: asyncio.Event = field(default_factory=lambda: _set(asyncio.Event()))  # no show now


def _set(event: asyncio.Event) -> asyncio.Event:
    event.set()
    return event


class ProgressPresenter:
    def __init__(
        self,
        platforms: Platforms,
        clock: Clock,
        interval_s: float = 4.0,
        min_gap_s: float = 1.0,
        store: BridgeStore | None = None,
        secrets: Secrets | None = None,
        placement: Placement | None = None,
    ) -> None:
        self._platforms = platforms
        self._placement = placement or Placement()  # whose left-overs are swept here
        self._store = store
        self._secrets = secrets if secrets is not None else Secrets()  # in the streamed answer
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
        else:
            return
        self._log(live, None)

    async def note(self, run_id: str, text: str) -> None:
        """A one-off line under the step, shown with the next update."""
        live = self._live.get(run_id)
        if live is not None and not self._log(live, text):
            live.note = text
            live.changed.set()

    def _log(self, live: _Live, note: str | None) -> bool:
        """Tell a transport that prints progress as lines this step or note at once (see
        `ProgressLog`); whether it is one."""
        transport = self._platforms.transport(live.route.platform)
        if not isinstance(transport, ProgressLog):
            return False
        view = replace(self._view(live), note=None if note is None else self._secrets.mask(note))
        transport.log_progress(live.route, view)
        return True

    def stream(self, run_id: str, delta: str, *, restart: bool = False) -> None:
        """More of the answer: shown with the next update (the first words at once).
        `restart`: what streamed so far is no answer (a failed attempt's): it goes."""
        live = self._live.get(run_id)
        if live is not None and restart:
            live.answer, live.round_over = "", False
            live.changed.set()
        if live is None or not delta:
            return
        if live.round_over:
            live.answer, live.round_over = "", False
        if not live.answer:
            live.first_words.set()
        live.answer += delta
        live.changed.set()

    def round_over(self, run_id: str, *, tool_calls: bool) -> None:
        """A model round ended; the next one streams afresh. Ended in tool calls, what it said
        is not the answer (it is shown as a note): the preview empties now. Else it is the
        answer unless an interjection makes the turn go on: it stays until the next words."""
        live = self._live.get(run_id)
        if live is None:
            return
        live.round_over = True
        if tool_calls and live.answer:
            live.answer = ""
            live.changed.set()

    async def finish(self, run_id: str, *, stopped: bool = False) -> None:
        """The turn ended: its progress is cleared, in the background. A stopped turn's
        partial answer is left shown, saying it was stopped. Waits only for a show in flight
        (at most `SETTLE_S`), so that no draft of the answer can arrive after the answer."""
        live = self._live.pop(run_id, None)
        if live is not None:
            live.stopped = stopped and bool(live.answer.strip())
            live.ended.set()
            # Not `wait_for`: on Python 3.11 it swallows a cancellation that arrives as the
            # show ends, and a bridge closing then waited for its dispatcher forever.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(SETTLE_S):
                    await live.quiet.wait()

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """What the last run left shown is removed first; at the stop, what shows now."""
        await self.sweep()
        yield
        await self.close()

    async def sweep(self, workspace_id: str | None = None) -> None:
        """Remove what progress showed when the last run stopped (a crash leaves it behind:
        a progress message, a half-streamed answer); the outbox delivers the answer itself.
        Of the workspace (or of every one served here)."""
        if self._store is None:
            return
        for route, message_id in await self._store.live_messages():
            if workspace_id not in (None, route.workspace_id):
                continue
            if not self._placement.serves(route.workspace_id):
                continue
            transport = self._platforms.transport(route.platform)
            if isinstance(transport, LiveMessages):
                ticket = await self._platforms.pacer(route.platform).acquire(route, Call.DELETE)
                try:
                    await transport.remove_live(route, message_id)
                except Exception:
                    log.warning(
                        "left-over progress not removed",
                        exc_info=True,
                        extra={"conversation": route.conversation_key},
                    )
                finally:
                    ticket.done()
            async with self._store.write() as tx:
                tx.live_removed(route, message_id)

    async def leave(self, workspace_id: str) -> None:
        """The workspace is no longer served here: its turns' progress ends here, what it
        shows cleared (where it is served, the next step of a turn still running shows it
        again)."""
        ending = []
        for run_id, live in list(self._live.items()):
            if live.route.workspace_id == workspace_id:
                del self._live[run_id]
                live.ended.set()
                ending.append(live.route.conversation_key)
        shows = [task for key in ending if (task := self._latest.get(key)) is not None]
        if shows:
            await asyncio.wait(shows, timeout=SETTLE_S)

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
            live.first_words.clear()
            view = self._view(live)
            live.quiet.clear()
            try:
                shown, ready, streamed = await self._show(live, view)
            finally:
                live.quiet.set()
            now = self._clock.monotonic()
            if shown:
                if live.note == view.note:
                    live.note = None
                soonest, latest = now + self._min_gap, now + self._interval
            elif view.answer and streamed:
                # The answer went; only the status waits for room: newer words still go
                # at the answer's pace.
                soonest, latest = now + self._min_gap, max(now + RETRY_FLOOR_S, ready)
            else:  # no room now: the newest state, once there is
                soonest = latest = max(now + RETRY_FLOOR_S, ready)
            await self._until(soonest, live.ended, live.first_words)
            await self._until(latest, live.ended, live.changed)
        deadline = self._clock.monotonic() + CLEAR_WITHIN_S
        if live.stopped:  # the partial answer stays, marked stopped: shown once there is room
            while not (await self._show(live, self._view(live)))[0]:
                if self._closing.is_set() or self._clock.monotonic() > deadline:
                    break
                await self._until(self._clock.monotonic() + RETRY_FLOOR_S, self._closing)
        elif live.note is not None:  # a note that came as the turn ended is told, once
            await self._show(live, self._view(live))
        while True:
            cleared, ready, _ = await self._show(live, None)
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
        answer = self._secrets.mask_unfinished(live.answer)
        return ProgressView(live.run_id, live.step, elapsed, live.note, answer, live.stopped)

    async def _show(self, live: _Live, view: ProgressView | None) -> tuple[bool, float, bool]:
        """Show (None: clear) within the budget: whether it all went, and if not, when the
        budget should have room for what did not; and whether the answer's call went."""
        route = live.route
        transport = self._platforms.transport(route.platform)
        if transport is None:
            return True, 0.0, True
        budget = self._platforms.budget(route)
        budget.on_posted = lambda: self._record(live, transport)
        try:
            await transport.show_progress(route, view, budget)
        except Exception:  # progress is best effort; a failure must not touch the turn
            log.warning(
                "progress update failed",
                exc_info=True,
                extra={"conversation": route.conversation_key},
            )
            return True, 0.0, True
        finally:
            budget.done()
            await self._record(live, transport)
        # A skipped typing action or status line is not worth showing again before the next
        # update (that would edit the message again); anything skipped in a clear is.
        skipped = budget.refused - {Call.INDICATOR} if view is not None else budget.refused
        # The answer's words go again as soon as they may, whatever else waits longer.
        ready = budget.ready_at({Call.STREAM} if Call.STREAM in skipped else skipped)
        return not skipped, ready, Call.STREAM not in skipped

    async def _record(self, live: _Live, transport: object) -> None:
        """Keep the store's list of the messages shown here in step with the transport's."""
        if self._store is None or not isinstance(transport, LiveMessages):
            return
        shown = transport.live_messages(live.route)
        if shown != live.recorded:
            async with self._store.write() as tx:
                tx.live_shown(live.route, shown)
            live.recorded = shown

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
