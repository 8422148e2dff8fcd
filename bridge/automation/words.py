"""/schedules in the operator's words: each schedule with when it runs next and how its last
run went, the wake-ups agents set, how to steer them, and the buttons that do it (each the
sub-command typed out, so a press does what typing it does)."""

from __future__ import annotations

from datetime import UTC, datetime

from bridge.automation.steering import ScheduleView, WakeupView, short
from bridge.store.automation import AutomationRun, RunOutcome
from bridge.types import Answer, Button

USAGE = (
    "/schedules pause ID, /schedules resume ID, /schedules run ID (once, now), "
    "/schedules cancel WAKE-UP"
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
CANCELLED = 'The wake-up {agent} had set for {when} is cancelled ("{note}").'
# The buttons under the list: a schedule's Pause or Resume and Run now, a wake-up's Cancel,
# for the first few of each (a message holds so many buttons, and a long list is a wall).
WITH_BUTTONS = 10
PAUSE, RESUME, RUN = "Pause {id}", "Resume {id}", "Run {id} now"
CANCEL = "Cancel {agent}'s wake-up at {when}"
MORE_SCHEDULES = "Buttons for the first {shown} schedules; {more} more: use /schedules pause ID."
MORE_WAKEUPS = "Buttons for the first {shown} wake-ups; {more} more: use /schedules cancel WAKE-UP."


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
    """Its time, its note and its agent; the short handle `/schedules cancel` takes (its id's
    end), not the id's 36 characters."""
    note = view.note if len(view.note) <= 80 else view.note[:79] + "\u2026"
    return f'- {when(view.due_at, now)}: "{note}" ({view.agent}; cancel: {short(view.id)})'


def steering_buttons(
    schedules: list[ScheduleView], wakeups: list[WakeupView], now: datetime
) -> tuple[Button, ...]:
    """A row for each of the first schedules: Pause (Resume when paused; neither when the
    config has it off) and Run now; then a row for each of the first wake-ups: Cancel."""
    found: list[Button] = []
    for row, s in enumerate(schedules[:WITH_BUTTONS]):
        if s.paused_by is not None:
            found.append(Button(RESUME.format(id=s.id), f"/schedules resume {s.id}", row))
        elif s.enabled:
            found.append(Button(PAUSE.format(id=s.id), f"/schedules pause {s.id}", row))
        found.append(Button(RUN.format(id=s.id), f"/schedules run {s.id}", row))
    first = len(schedules[:WITH_BUTTONS])
    for row, w in enumerate(wakeups[:WITH_BUTTONS], start=first):
        label = CANCEL.format(agent=w.agent, when=when(w.due_at, now))
        found.append(Button(label, f"/schedules cancel {w.id}", row))
    return tuple(found)


def listing(schedules: list[ScheduleView], wakeups: list[WakeupView], now: datetime) -> Answer:
    if not schedules and not wakeups:
        return Answer(NONE)
    lines = []
    if schedules:
        lines += ["Schedules:", *(schedule_line(s, now) for s in schedules)]
    if wakeups:
        lines += ["Wake-ups the agents set:", *(wakeup_line(w, now) for w in wakeups)]
    lines += ["", USAGE]
    if len(schedules) > WITH_BUTTONS:
        lines.append(MORE_SCHEDULES.format(shown=WITH_BUTTONS, more=len(schedules) - WITH_BUTTONS))
    if len(wakeups) > WITH_BUTTONS:
        lines.append(MORE_WAKEUPS.format(shown=WITH_BUTTONS, more=len(wakeups) - WITH_BUTTONS))
    return Answer("\n".join(lines), steering_buttons(schedules, wakeups, now))
