"""The console's Schedules page: a workspace's schedules, the wake-ups its agents set and its
recent runs (one read), and the admin's pause, resume, run now and cancel. The steering itself
is `bridge.automation`'s, the same as the chat's /schedules; here each action is checked
against the workspace, recorded in the audit of admin actions, and said in one line. An
admin's edit of a schedule (applied as a config edit) is said and recorded here too."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime

from bridge.admin.errors import NotInWorkspace, NotPossible
from bridge.admin.words import by_admin
from bridge.automation.steering import NoSuchSchedule, ScheduleView, WakeupView, describe_timing
from bridge.automation.words import when
from bridge.events import AdminActionKind
from bridge.service import Bridge
from bridge.store.automation import AutomationRun, RunOutcome
from bridge.store.records import AdminActionRecord
from config.automation import ScheduleConfig

NOTE_IN_AUDIT = 200  # characters of a cancelled wake-up's note kept in its audit event


@dataclass(frozen=True, slots=True)
class ScheduleBoard:
    schedules: list[ScheduleView]
    wakeups: list[WakeupView]
    runs: list[AutomationRun]  # newest first


async def read_schedules(bridge: Bridge, workspace_id: str) -> ScheduleBoard:
    automations = bridge.automations
    return ScheduleBoard(
        await automations.schedules(workspace_id),
        automations.wakeups(workspace_id),
        await bridge.automation.recent_runs(workspace_id),
    )


def change_words(
    schedule_id: str, before: ScheduleConfig | None, after: ScheduleConfig | None
) -> str:
    """What an edit did to a schedule, in a line: the keys it changed and how the schedule
    runs now (never its prompt, which may be long or private)."""
    if after is None:
        return f"schedule {schedule_id} removed"
    runs = f"{describe_timing(after)}, agent {after.agent}" + ("" if after.enabled else ", off")
    if before is None:
        return f"schedule {schedule_id} added: {runs}"
    keys = [k for k in type(after).model_fields if getattr(before, k) != getattr(after, k)]
    if not keys:
        return f"schedule {schedule_id} unchanged: {runs}"
    return f"schedule {schedule_id} changed ({', '.join(keys)}): {runs}"


class ScheduleSteering:
    """Each action names the admin as who did it (`admin acme/lead`), as the chat names the
    operator; an id the workspace does not have is `NotInWorkspace` (the page's 404)."""

    def __init__(self, bridge: Bridge) -> None:
        self._bridge = bridge
        self._automations = bridge.automations

    async def pause(self, workspace_id: str, schedule_id: str, admin: str) -> str:
        view = await self._schedule(workspace_id, schedule_id)
        if view.paused_by is not None:
            raise NotPossible(f"schedule {schedule_id} is already paused by {view.paused_by}")
        with _known():
            await self._automations.pause(workspace_id, schedule_id, by_admin(admin))
        await self._record(workspace_id, admin, AdminActionKind.PAUSE_SCHEDULE, view)
        return f"Schedule {schedule_id} is paused: it does not run until it is resumed."

    async def resume(self, workspace_id: str, schedule_id: str, admin: str) -> str:
        view = await self._schedule(workspace_id, schedule_id)
        if view.paused_by is None:
            raise NotPossible(f"schedule {schedule_id} is not paused")
        with _known():
            await self._automations.resume(workspace_id, schedule_id, by_admin(admin))
        await self._record(workspace_id, admin, AdminActionKind.RESUME_SCHEDULE, view)
        resumed = await self._schedule(workspace_id, schedule_id)
        now = datetime.fromtimestamp(self._bridge.runtime.clock.wall(), UTC)
        return f"Schedule {schedule_id} runs again; next at {when(resumed.next_fire, now)}."

    async def run_now(self, workspace_id: str, schedule_id: str, admin: str) -> str:
        """One run at once; the schedule's own times (and a pause) stay as they were."""
        view = await self._schedule(workspace_id, schedule_id)
        with _known():
            outcome = await self._automations.run_now(workspace_id, schedule_id, by_admin(admin))
        started = outcome is RunOutcome.STARTED
        said = "started" if started else "skipped: the previous run was still going"
        await self._record(workspace_id, admin, AdminActionKind.RUN_SCHEDULE, view, said)
        if not started:
            return f"Schedule {schedule_id} did not run: its previous run is still going."
        return f"Schedule {schedule_id} runs now; its answer goes where its runs' answers go."

    async def cancel_wakeup(self, workspace_id: str, wakeup_id: str, admin: str) -> str:
        with _known():
            wakeup = await self._automations.cancel_wakeup(workspace_id, wakeup_id, by_admin(admin))
        due = wakeup.due_at.strftime("%Y-%m-%d %H:%M:%S UTC")
        async with self._bridge.store.write() as tx:
            tx.admin_action(
                AdminActionRecord(
                    workspace_id,
                    admin,
                    AdminActionKind.CANCEL_WAKEUP,
                    wakeup.id,
                    wakeup.session_id,
                    f"{wakeup.agent}, due {due}: {wakeup.note[:NOTE_IN_AUDIT]!r}",
                )
            )
        return (
            f"The wake-up {wakeup.agent} had set for {due} is cancelled "
            f"({wakeup.note[:NOTE_IN_AUDIT]!r}); it will not run."
        )

    async def edited(self, workspace_id: str, schedule_id: str, admin: str, said: str) -> None:
        """An applied edit of a schedule (`change_words`) in the audit of admin actions."""
        async with self._bridge.store.write() as tx:
            tx.admin_action(
                AdminActionRecord(
                    workspace_id, admin, AdminActionKind.EDIT_CONFIG, schedule_id, None, said
                )
            )

    async def _schedule(self, workspace_id: str, schedule_id: str) -> ScheduleView:
        views = await self._automations.schedules(workspace_id)
        found = next((v for v in views if v.id == schedule_id), None)
        if found is None:
            known = ", ".join(v.id for v in views) or "none"
            raise NotInWorkspace(f"no schedule {schedule_id!r} here (schedules: {known})")
        return found

    async def _record(
        self,
        workspace_id: str,
        admin: str,
        kind: AdminActionKind,
        view: ScheduleView,
        outcome: str | None = None,
    ) -> None:
        detail = f"{view.timing}, agent {view.agent}" + (f"; {outcome}" if outcome else "")
        async with self._bridge.store.write() as tx:
            tx.admin_action(AdminActionRecord(workspace_id, admin, kind, view.id, None, detail))


@contextmanager
def _known() -> Iterator[None]:
    """A schedule or wake-up the workspace does not have (a reload took it, another admin
    cancelled it) is the page's 404, with the ids it does have."""
    try:
        yield
    except NoSuchSchedule as exc:
        raise NotInWorkspace(str(exc)) from None
