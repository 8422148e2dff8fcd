"""What operators and admins see of a workspace's schedules and wake-ups, and how they steer
them: pause, resume, run now, cancel a wake-up. One place for the chat's /schedules, the
console and the CLI, so each says and does the same."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime

from bridge.automation.schedules import Schedules
from bridge.sessions import agent_key
from bridge.store.automation import AutomationKind, AutomationRun, AutomationStore, RunOutcome
from config.automation import ScheduleConfig
from config.current import CurrentConfig
from runtime.engine import Runtime

log = logging.getLogger(__name__)
SHORT = 6  # characters of a wake-up's id /schedules shows: its random part's end
MIN_SHORT = 4  # the fewest that /schedules cancel takes


class NoSuchSchedule(LookupError):
    """The workspace has no schedule (or pending wake-up) by that id: the message says so and
    lists the ones it has."""


@dataclass(frozen=True, slots=True)
class ScheduleView:
    id: str
    agent: str
    timing: str  # "cron 0 9 * * 1-5 (Europe/Berlin)", "every 15m", "at 2026-12-01 09:00 ..."
    heartbeat: bool
    enabled: bool  # in the config
    paused_by: str | None  # paused by an operator (None: not paused)
    next_fire: datetime | None
    last: AutomationRun | None


@dataclass(frozen=True, slots=True)
class WakeupView:
    id: str
    agent: str
    session_id: str
    due_at: datetime
    note: str


def describe_timing(schedule: ScheduleConfig) -> str:
    if schedule.cron is not None:
        said = f"cron {schedule.cron} ({schedule.timezone})"
    elif schedule.every is not None:
        said = f"every {schedule.every}"
    else:
        assert schedule.at is not None
        said = f"at {schedule.at.isoformat()}"
    return said + (f", {schedule.active_hours}" if schedule.active_hours else "")


class Automations:
    def __init__(
        self,
        config: CurrentConfig,
        runtime: Runtime,
        schedules: Schedules,
        store: AutomationStore,
    ) -> None:
        self._config = config
        self._runtime = runtime
        self._schedules = schedules
        self._store = store

    async def schedules(self, workspace_id: str) -> list[ScheduleView]:
        workspace = self._config.workspace(workspace_id)
        if workspace is None:
            return []
        states = {
            s.automation_id: s
            for s in await self._store.states()
            if s.workspace_id == workspace_id and s.kind is AutomationKind.SCHEDULE
        }
        latest = {
            r.automation_id: r
            for r in await self._store.latest_runs()
            if r.workspace_id == workspace_id and r.kind is AutomationKind.SCHEDULE
        }
        views = []
        for s in workspace.schedules:
            state = states.get(s.id)
            paused_by = (state.changed_by or "an operator") if state and state.paused else None
            views.append(
                ScheduleView(
                    s.id,
                    s.agent,
                    describe_timing(s),
                    s.kind == "heartbeat",
                    s.enabled,
                    paused_by,
                    self._schedules.next_fire(workspace_id, s.id),
                    latest.get(s.id),
                )
            )
        return views

    def wakeups(self, workspace_id: str) -> list[WakeupView]:
        prefix = agent_key(workspace_id, "")
        found = []
        for wakeup in self._runtime.alarm.pending():
            session = self._runtime.sessions.get(wakeup.session_id)
            if session is None or not session.record.agent_id.startswith(prefix):
                continue
            agent = session.record.agent_id.removeprefix(prefix)
            due = datetime.fromtimestamp(wakeup.due_at, UTC)
            found.append(WakeupView(wakeup.id, agent, wakeup.session_id, due, wakeup.note))
        return found

    async def pause(self, workspace_id: str, schedule_id: str, by: str) -> None:
        self._schedule(workspace_id, schedule_id)
        await self._schedules.pause(workspace_id, schedule_id, by)

    async def resume(self, workspace_id: str, schedule_id: str, by: str) -> None:
        self._schedule(workspace_id, schedule_id)
        await self._schedules.resume(workspace_id, schedule_id, by)

    async def run_now(self, workspace_id: str, schedule_id: str, by: str) -> RunOutcome:
        schedule = self._schedule(workspace_id, schedule_id)
        workspace = self._config.workspace(workspace_id)
        assert workspace is not None
        return await self._schedules.run_now(workspace, schedule, by)

    async def cancel_wakeup(self, workspace_id: str, wakeup_id: str, by: str) -> WakeupView:
        """By its id, or by the end of it that /schedules shows (at least 4 characters, one
        wake-up's only)."""
        mine = {w.id: w for w in self.wakeups(workspace_id)}
        if wakeup_id not in mine and len(wakeup_id) >= MIN_SHORT:
            ending = [i for i in mine if i.endswith(wakeup_id)]
            wakeup_id = ending[0] if len(ending) == 1 else wakeup_id
        if wakeup_id not in mine or await self._runtime.alarm.cancel(wakeup_id, by) is None:
            pending = ", ".join(short(i) for i in mine) or "none"
            raise NoSuchSchedule(f"no pending wake-up {wakeup_id!r} here (pending: {pending})")
        log.info("wake-up cancelled", extra={"wakeup_id": wakeup_id, "by": by})
        return mine[wakeup_id]

    def _schedule(self, workspace_id: str, schedule_id: str) -> ScheduleConfig:
        workspace = self._config.workspace(workspace_id)
        schedules = {s.id: s for s in (workspace.schedules if workspace else [])}
        if schedule_id not in schedules:
            known = ", ".join(schedules) or "none"
            raise NoSuchSchedule(f"no schedule {schedule_id!r} here (schedules: {known})")
        return schedules[schedule_id]


def short(wakeup_id: str) -> str:
    """A wake-up as an operator types it: the end of its id."""
    return wakeup_id[-SHORT:]
