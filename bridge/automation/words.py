"""/schedules in the operator's words: each schedule with when it runs next and how its last
run went, the wake-ups agents set, and how to steer them."""

from __future__ import annotations

from datetime import UTC, datetime

from bridge.automation.steering import ScheduleView, WakeupView
from bridge.store.automation import AutomationRun, RunOutcome

USAGE = (
    "/schedules pause ID, /schedules resume ID, /schedules run ID (once, now), "
    "/schedules cancel WAKE-UP-ID"
)
NONE = "No schedules in this workspace, and no wake-ups set. Schedules are set in the config."
OUTCOME_WORDS = {
    RunOutcome.STARTED: "started",
    RunOutcome.SKIPPED: "skipped (the run before was still going)",
    RunOutcome.COMPLETED: "answered",
    RunOutcome.QUIET: "nothing to report",
    RunOutcome.FAILED: "could not finish",
    RunOutcome.STOPPED: "stopped",
}
PAUSED = "Schedule {id} is paused: it does not run until /schedules resume {id}."
RESUMED = "Schedule {id} runs again; next at {next}."
RUN_NOW = "Schedule {id} runs now; its answer comes here as usual."
RUN_NOW_SKIPPED = "Schedule {id} did not run: its previous run is still going."
CANCELLED = 'Wake-up {id} of {agent} is cancelled ("{note}").'


def when(moment: datetime | None, now: datetime) -> str:
    if moment is None:
        return "none"
    fmt = "%H:%M:%S UTC" if moment.date() == now.date() else "%Y-%m-%d %H:%M UTC"
    return moment.astimezone(UTC).strftime(fmt)


def last_run(run: AutomationRun | None, now: datetime) -> str:
    if run is None:
        return "not run yet"
    at = when(datetime.fromtimestamp(run.fired_at, UTC), now)
    detail = f": {run.detail}" if run.outcome is RunOutcome.FAILED and run.detail else ""
    return f"last run {at}, {OUTCOME_WORDS[run.outcome]}{detail}"


def schedule_line(view: ScheduleView, now: datetime) -> str:
    kind = "heartbeat, " if view.heartbeat else ""
    if not view.enabled:
        state = "off in the config"
    elif view.paused_by is not None:
        state = f"paused by {view.paused_by}"
    else:
        state = f"next {when(view.next_fire, now)}"
    last = last_run(view.last, now)
    return f"- {view.id} ({kind}{view.timing}, agent {view.agent}): {state}; {last}"


def wakeup_line(view: WakeupView, now: datetime) -> str:
    note = view.note if len(view.note) <= 80 else view.note[:79] + "\u2026"
    return f'- {view.id} ({view.agent}): {when(view.due_at, now)}, "{note}"'


def listing(schedules: list[ScheduleView], wakeups: list[WakeupView], now: datetime) -> str:
    if not schedules and not wakeups:
        return NONE
    lines = []
    if schedules:
        lines += ["Schedules:", *(schedule_line(s, now) for s in schedules)]
    if wakeups:
        lines += ["Wake-ups the agents set:", *(wakeup_line(w, now) for w in wakeups)]
    return "\n".join([*lines, "", USAGE])
