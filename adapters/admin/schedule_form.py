"""A schedule's form on the Schedules tab, read into a `ScheduleEdit`: each field as typed, for
the config's loader to check in its own words; only what the loader cannot say (a stale page,
a missing id, max_rounds not a number) is refused here. Field names (stable, the tests use
them), the config's keys: `version`, `id` (a new schedule's), `agent`, `kind`, `cron`, `every`,
`at`, `timezone`, `prompt`, `session`, `deliver`, `active_hours`, `max_rounds`, `enabled`."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from adapters.admin.config_form import FormErrors, Located, first_of, located
from config.edit import STALE, ScheduleEdit, version
from config.schema import WorkspaceConfig

__all__ = ["FormErrors", "first_of", "form_values", "read_schedule", "refusal", "typed_back"]

# the form's fields as its labels name them, in the form's order
LABELS = {
    "id": "Id",
    "agent": "Agent",
    "kind": "What it asks",
    "cron": "Cron",
    "every": "Every",
    "at": "At",
    "timezone": "Timezone",
    "active_hours": "Active hours",
    "prompt": "Prompt",
    "session": "Session",
    "deliver": "Its answer goes to",
    "max_rounds": "Most rounds a run may take",
    "enabled": "Enabled",
}
# a problem of the whole schedule goes to the first of these fields its words name ("needs
# exactly one of cron, every or at": cron); `at` last, being also an English word
_NAMED = ("id", "cron", "every", "timezone", "active_hours", "prompt", "agent", "deliver", "at")


def _text(form: Mapping[str, Any], name: str) -> str:
    value = form.get(name, "")
    return value.strip() if isinstance(value, str) else ""


def read_schedule(
    form: Mapping[str, Any], workspace: WorkspaceConfig, schedule_id: str | None
) -> ScheduleEdit:
    """The schedule the form asks for (`schedule_id`'s, or a new one named by its `id`
    field); FormErrors says what is wrong with it."""
    if _text(form, "version") != version(workspace):
        raise FormErrors([STALE])
    problems: dict[str, str] = {}
    new_id = schedule_id or _text(form, "id")
    if not new_id:
        problems["id"] = "a new schedule needs an id: letters, digits, '.', '_' or '-'"
    rounds = _text(form, "max_rounds") or "20"
    if not re.fullmatch(r"\d{1,6}", rounds):
        problems["max_rounds"] = f"the most rounds is a whole number, not {rounds!r}"
    if problems:
        raise FormErrors([f"{LABELS[k]}: {v}" for k, v in problems.items()], problems)
    prompt = str(form.get("prompt", "")).replace("\r\n", "\n")
    return ScheduleEdit(
        id=new_id,
        agent=_text(form, "agent"),
        kind=_text(form, "kind") or "prompt",
        cron=_text(form, "cron") or None,
        every=_text(form, "every") or None,
        at=_text(form, "at") or None,
        timezone=_text(form, "timezone") or "UTC",
        prompt=prompt if prompt.strip() else None,
        session=_text(form, "session") or "own",
        deliver=_text(form, "deliver") or "primary",
        active_hours=_text(form, "active_hours") or None,
        max_rounds=int(rounds),
        enabled=bool(_text(form, "enabled")),
    )


def form_values(schedule: ScheduleEdit) -> dict[str, str]:
    """The form's fields for a schedule as it runs (an empty one for a new schedule)."""
    values = {key: "" if value is None else str(value) for key, value in asdict(schedule).items()}
    values["enabled"] = "1" if schedule.enabled else ""
    return values


def typed_back(form: Mapping[str, Any]) -> dict[str, str]:
    """What the admin typed, to show the form again as they left it after a refusal."""
    return {key: value for key, value in form.items() if isinstance(value, str)}


def refusal(report: str, schedule_id: str) -> FormErrors:
    """A refused edit of schedule `schedule_id` in the admin's words: each problem of one of
    its fields tied to that field (the first problem of a field), the rest in the summary."""
    lines: list[str] = []
    fields: dict[str, str] = {}
    for problem in located(report):
        if isinstance(problem, str):
            lines.append(problem)
            continue
        field = _field(problem, schedule_id)
        if field and field not in fields:
            fields[field] = problem.what
            lines.append(f"{LABELS[field]}: {problem.what}")
        else:
            lines.append(problem.what)
    return FormErrors(lines, fields)


def _field(problem: Located, schedule_id: str) -> str | None:
    """The form's field `problem` is about, if it is about this schedule."""
    if "schedules" not in problem.path or schedule_id not in problem.ids[-1:]:
        return None
    key = problem.path[-1]
    if isinstance(key, str) and key in LABELS:
        return key
    return next((f for f in _NAMED if re.search(rf"\b{f}\b", problem.what)), None)
