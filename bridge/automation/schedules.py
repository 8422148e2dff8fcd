"""The schedules' clock: each configured schedule's next slot in one heap, the earliest fired
at its slot plus its jitter (`config/timing.py`).

What is owed is read from the store, not kept in memory: a schedule's slots count from its
newest run, or from when it was first seen or resumed. So after a restart (or on the replica
that takes over) slots missed while nothing ran are run once, as one run that says how many
it stands for, and a slot already run is never run again (its run is stored with its message,
under a key unique per slot). Only the process that runs the turns keeps the clock."""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime

from bridge.automation.runs import Fire, Runs, Source
from bridge.metrics import Metrics
from bridge.store.automation import (
    AutomationKind,
    AutomationStore,
    Key,
    RunOutcome,
    first_seen,
    retimed,
    set_paused,
)
from bridge.store.store import BridgeStore
from config.automation import ScheduleConfig
from config.current import CurrentConfig
from config.schema import WorkspaceConfig
from runtime.engine import Runtime
from runtime.errors import StoreConflictError
from runtime.tasks import cancel_and_wait

log = logging.getLogger(__name__)

MAX_NAP_S = 30.0  # the wall clock is looked at at least this often (it may jump)
RETRY_S = 5.0  # a fire that failed (the store down) is tried again after this
# Fires under way at once: their writes share group commits instead of waiting in line. A
# schedule has one entry in the heap, taken while it fires, so it never fires twice at once.
MAX_FIRING = 32


@dataclass(order=True, slots=True)
class Due:
    fire_at: float
    key: Key = field(compare=False)
    slot: datetime = field(compare=False)
    missed: int = field(compare=False)  # earlier slots this one run stands for
    generation: int = field(compare=False)


def fire_text(schedule: ScheduleConfig, slot: datetime, missed: int) -> str:
    when = slot.astimezone(schedule.timing.tz).strftime("%Y-%m-%d %H:%M:%S")
    lines = [f'[Scheduled run of "{schedule.id}" for {when} ({schedule.timezone})]']
    if missed:
        lines.append(
            f"[Switchboard was not running at {missed} earlier time(s) this was due; this one "
            "run stands for them.]"
        )
    return "\n".join([*lines, schedule.text])


class Schedules:
    def __init__(
        self,
        config: CurrentConfig,
        runtime: Runtime,
        store: BridgeStore,
        automation: AutomationStore,
        runs: Runs,
        metrics: Metrics,
    ) -> None:
        self._config = config
        self._runtime = runtime
        self._store = store
        self._automation = automation
        self._runs = runs
        self._metrics = metrics
        self._heap: list[Due] = []
        self._next: dict[Key, Due] = {}  # each schedule's entry in the heap
        self._by_key: dict[Key, tuple[WorkspaceConfig, ScheduleConfig]] = {}
        self._after: dict[Key, datetime] = {}  # slots after this are owed a run
        self._paused: set[Key] = set()
        self._timings: dict[Key, tuple[object, ...]] = {}  # as configured, to see edits
        self._generation = 0
        self._changed = False  # the config or a pause changed: plan again
        self._wake = asyncio.Event()  # the heap changed (or must be planned again)
        self._firing: set[asyncio.Task[None]] = set()
        self._in_flight: set[Key] = set()  # firing now: each re-arms itself when it is done
        self._room = asyncio.Semaphore(MAX_FIRING)

    # -- the operator's controls ----------------------------------------------------------

    def paused(self, workspace_id: str, schedule_id: str) -> bool:
        return (workspace_id, AutomationKind.SCHEDULE, schedule_id) in self._paused

    def next_fire(self, workspace_id: str, schedule_id: str) -> datetime | None:
        due = self._next.get((workspace_id, AutomationKind.SCHEDULE, schedule_id))
        return datetime.fromtimestamp(due.fire_at, UTC) if due is not None else None

    async def pause(self, workspace_id: str, schedule_id: str, by: str) -> None:
        key = (workspace_id, AutomationKind.SCHEDULE, schedule_id)
        async with self._store.write() as tx:
            set_paused(tx, key, True, by)
        self._paused.add(key)
        self._rebuild()
        self.reload()
        log.info(
            "schedule paused",
            extra={"workspace_id": workspace_id, "schedule": schedule_id, "by": by},
        )

    async def resume(self, workspace_id: str, schedule_id: str, by: str) -> None:
        key = (workspace_id, AutomationKind.SCHEDULE, schedule_id)
        async with self._store.write() as tx:
            set_paused(tx, key, False, by)
        self._paused.discard(key)
        self._after[key] = self._now()
        self._rebuild()
        self.reload()
        log.info(
            "schedule resumed",
            extra={"workspace_id": workspace_id, "schedule": schedule_id, "by": by},
        )

    async def run_now(
        self, workspace: WorkspaceConfig, schedule: ScheduleConfig, by: str
    ) -> RunOutcome:
        """One run at once, asked for by `by`; the schedule's own times stay as they were."""
        now = self._now()
        text = fire_text(schedule, now, 0) + f"\n[Run now, asked for by {by}.]"
        fire = Fire(text, f"now:{now.isoformat()}", now.timestamp())
        return await self._start(workspace, schedule, fire)

    # -- the clock ------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Each schedule's slots owed since the last run, then its times, until the stop: the
        clock stops and the runs firing now are cancelled."""
        states = {
            (s.workspace_id, s.kind, s.automation_id): s for s in await self._automation.states()
        }
        self._paused = {k for k, s in states.items() if s.paused}
        for key, state in states.items():
            self._after[key] = datetime.fromtimestamp(state.since, UTC)
        for run in await self._automation.latest_runs():
            key = (run.workspace_id, run.kind, run.automation_id)
            ran = datetime.fromtimestamp(run.slot_at, UTC)
            if run.fire_key.startswith("now:"):
                continue  # a run-now is not one of its slots
            if key not in self._after or ran > self._after[key]:
                self._after[key] = ran
        await self._see_changes()
        self._rebuild()
        task = asyncio.get_running_loop().create_task(self._run(), name="schedules")
        yield
        await cancel_and_wait(task)
        await cancel_and_wait(*self._firing)

    def reload(self) -> None:
        """The config (or a schedule's pause) changed: plan again."""
        self._changed = True
        self._wake.set()

    async def _see_changes(self) -> None:
        """Schedules never seen before, and those whose timing a reload changed, count their
        slots from now: a config that adds one does not owe it every slot since the epoch, and
        an edit from every 1h to every 2s does not owe the 2 s slots since the last run."""
        new: list[Key] = []
        moved: list[Key] = []
        for key, _, schedule in self._schedules():
            timing: tuple[object, ...] = (schedule.cron, schedule.every, schedule.at)
            timing += (schedule.timezone, schedule.active_hours)
            if key not in self._after:
                new.append(key)
            elif self._timings.get(key, timing) != timing:
                moved.append(key)
            self._timings[key] = timing
        if not new and not moved:
            return
        now = self._now()
        async with self._store.write() as tx:
            first_seen(tx, new, now.timestamp())
            retimed(tx, moved, now.timestamp())
        for key in (*new, *moved):
            self._after[key] = now

    def _schedules(self) -> list[tuple[Key, WorkspaceConfig, ScheduleConfig]]:
        return [
            ((w.id, AutomationKind.SCHEDULE, s.id), w, s)
            for w in self._config().workspaces
            for s in w.schedules
        ]

    def _rebuild(self) -> None:
        self._generation += 1
        self._heap = []
        self._next = {}
        self._by_key = {key: (w, s) for key, w, s in self._schedules()}
        now = self._now()
        for key, _, schedule in self._schedules():
            if key not in self._in_flight:
                self._arm(key, schedule, now)

    def _arm(self, key: Key, schedule: ScheduleConfig, now: datetime) -> None:
        """Plan the schedule's next fire, if it is enabled, not paused and not planned yet."""
        armed = schedule.enabled and key not in self._paused
        if armed and key in self._after and key not in self._next:
            self._push(key, schedule, self._after[key], now)

    def _push(self, key: Key, schedule: ScheduleConfig, after: datetime, now: datetime) -> None:
        timing = schedule.timing
        slot = timing.next_after(after)
        if slot is None:
            return
        missed = 0
        if slot <= now:  # owed while nothing ran (or while a run took long): run once
            newest, count = timing.missed(after, now)
            slot, missed = (newest or slot), max(0, count - 1)
        fire_at = max(slot.timestamp(), now.timestamp()) + timing.jitter_s
        due = Due(fire_at, key, slot, missed, self._generation)
        heapq.heappush(self._heap, due)
        self._next[key] = due
        self._wake.set()  # it may be due before the one the clock waits for

    async def _run(self) -> None:
        while True:
            self._wake.clear()
            if self._changed:
                self._changed = False
                await self._see_changes()
                self._rebuild()
            if not self._heap:
                await self._wake.wait()
                continue
            delay = self._heap[0].fire_at - self._runtime.clock.wall()
            if delay > 0:
                await self._nap(min(delay, MAX_NAP_S))
                continue
            due = heapq.heappop(self._heap)
            if due.generation == self._generation:
                self._next.pop(due.key, None)
                self._in_flight.add(due.key)
                await self._room.acquire()
                task = asyncio.get_running_loop().create_task(self._fire_in_turn(due))
                self._firing.add(task)
                task.add_done_callback(self._firing.discard)

    async def _nap(self, seconds: float) -> None:
        # asyncio.timeout, not wait_for: on Python 3.11 wait_for can swallow the stop's
        # cancellation as the nap ends, and the clock's loop would go on, the stop waiting.
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await self._wake.wait()

    async def _fire_in_turn(self, due: Due) -> None:
        try:
            await self._fire(due)
        finally:
            self._in_flight.discard(due.key)
            self._room.release()

    async def _fire(self, due: Due) -> None:
        """Start the due run, then plan the next one from what holds once it has started: a
        pause, an edit or a removal while the run was starting is not undone by a plan made
        before it (the rebuild leaves a schedule that is firing to this)."""
        found = self._by_key.get(due.key)
        if found is None:
            return
        workspace, schedule = found
        fire = Fire(
            fire_text(schedule, due.slot, due.missed),
            due.slot.isoformat(),
            due.slot.timestamp(),
            due.missed,
        )
        try:
            await self._start(workspace, schedule, fire)
        except Exception:
            log.exception(
                "scheduled run could not start; trying again", extra={"schedule": schedule.id}
            )
            if self._still_armed(due.key) and due.key not in self._next:
                due.fire_at = self._runtime.clock.wall() + RETRY_S
                due.generation = self._generation
                heapq.heappush(self._heap, due)
                self._next[due.key] = due
                self._wake.set()
            return
        if due.key not in self._after or due.slot > self._after[due.key]:
            self._after[due.key] = due.slot
        current = self._by_key.get(due.key)
        if current is not None:
            self._arm(due.key, current[1], self._now())

    def _still_armed(self, key: Key) -> bool:
        current = self._by_key.get(key)
        return current is not None and current[1].enabled and key not in self._paused

    async def _start(
        self, workspace: WorkspaceConfig, schedule: ScheduleConfig, fire: Fire
    ) -> RunOutcome:
        source = Source(
            AutomationKind.SCHEDULE,
            workspace.id,
            schedule.id,
            schedule.agent,
            schedule.session,
            schedule.deliver,
            schedule.max_rounds,
            heartbeat=schedule.kind == "heartbeat",
        )
        try:
            outcome = await self._runs.start(source, workspace, fire)
        except StoreConflictError:
            outcome = RunOutcome.SKIPPED  # this slot ran already (before a crash, or elsewhere)
            log.info("scheduled run already started for this slot", extra={"schedule": schedule.id})
        self._metrics.automation_runs.inc(workspace=workspace.id, kind="schedule", outcome=outcome)
        return outcome

    def _now(self) -> datetime:
        return datetime.fromtimestamp(self._runtime.clock.wall(), UTC)
