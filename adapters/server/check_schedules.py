"""check-config's lines for a workspace's schedules (when each fires next, in its timezone)
and its triggers (where each is posted)."""

from __future__ import annotations

from datetime import datetime

from config.automation import ScheduleConfig, TriggerConfig

UPCOMING = 3


def schedule_line(schedule: ScheduleConfig, now: datetime) -> str:
    """`  schedule morning (agent assistant, to primary): cron "0 9 * * 1-5" in Europe/Berlin;
    next Mon 2026-11-30 09:00 CET, ...`: the next three fire times, or why there are none."""
    timing = schedule.timing
    when = "once"
    if schedule.cron is not None:
        when = f'cron "{schedule.cron}"'
    elif schedule.every is not None:
        when = f"every {schedule.every}"
    hours = f", active {schedule.active_hours}" if schedule.active_hours else ""
    head = (
        f"  {'heartbeat' if schedule.kind == 'heartbeat' else 'schedule'} {schedule.id} "
        f"(agent {schedule.agent}, to {schedule.deliver}): {when} in {schedule.timezone}{hours}"
    )
    if not schedule.enabled:
        return f"{head}; paused in the config (enabled = false)"
    slots = timing.upcoming(now, UPCOMING)
    if timing.at is not None and not slots:
        passed = _shown([timing.at.astimezone(timing.tz)])[0]
        return f"{head}; at {passed} has passed: remove it or set a later at"
    if not slots:
        return f"{head}; fires no more"
    jitter = f" (+{timing.jitter_s:g} s jitter)" if timing.jitter_s else ""
    return f"{head}; next {', '.join(_shown(slots))}{jitter}"


def trigger_line(workspace_id: str, trigger: TriggerConfig, public_url: str | None) -> str:
    """`  trigger ci (agent assistant, to primary): POST /hooks/acme/ci, github signature`."""
    path = f"/hooks/{workspace_id}/{trigger.id}"
    where = f"{public_url.rstrip('/')}{path}" if public_url else path
    state = "" if trigger.enabled else "; off in the config (enabled = false): answered 404"
    return (
        f"  trigger {trigger.id} (agent {trigger.agent}, to {trigger.deliver}): POST {where}, "
        f"{trigger.kind} signature{state}"
    )


def _shown(slots: list[datetime]) -> list[str]:
    """As a person reads them: the weekday, and seconds only where a slot has some."""
    seconds = ":%S" if any(slot.second for slot in slots) else ""
    return [slot.strftime(f"%a %Y-%m-%d %H:%M{seconds} %Z") for slot in slots]
