"""The console's edit of a workspace's `[[workspaces.schedules]]`: each schedule's keys as
typed (the loader checks them, in its own words), written key by key so what the admin did
not change stays byte for byte. Triggers are not edited here: their secret stays in the file."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import tomlkit

from config.automation import ScheduleConfig
from config.errors import ConfigError
from config.schema import WorkspaceConfig
from config.toml_edit import append_entry, lead_of, set_key, set_or_drop


@dataclass(frozen=True, slots=True)
class ScheduleEdit:
    id: str
    agent: str
    kind: str = "prompt"
    cron: str | None = None
    every: str | None = None
    at: str | None = None  # ISO 8601 as typed
    timezone: str = "UTC"
    prompt: str | None = None
    session: str = "own"
    deliver: str = "primary"
    active_hours: str | None = None
    max_rounds: int = 20
    enabled: bool = True

    @classmethod
    def of(cls, schedule: ScheduleConfig) -> ScheduleEdit:
        """The schedule as it runs: an edit of it that changes nothing."""
        return cls(
            id=schedule.id,
            **{key: getattr(schedule, key) for key in KEYS if key != "at"},
            at=schedule.at.isoformat() if schedule.at else None,
        )


# A schedule's keys after its id, in the order a new entry is written, each with the value
# it has when absent from the file (None: it has none).
KEYS: dict[str, Any] = {
    "agent": None,
    "kind": "prompt",
    "cron": None,
    "every": None,
    "at": None,
    "timezone": "UTC",
    "prompt": None,
    "session": "own",
    "deliver": "primary",
    "active_hours": None,
    "max_rounds": 20,
    "enabled": True,
}


def edit_schedules(table: Any, running: WorkspaceConfig, edits: tuple[ScheduleEdit, ...]) -> None:
    """The workspace `table`'s schedules made `edits`: the running ones not among them taken
    out, the others changed key by key, the new ones appended (an id twice is appended
    twice, for the loader to refuse in its words)."""
    current = {s.id: s for s in running.schedules}
    entries = table.get("schedules")
    if entries is None:
        if not edits:
            return
        lead = lead_of(table)
        table["schedules"] = tomlkit.aot()
        entries = table["schedules"]
    else:
        lead = ""
    if {e.get("id") for e in entries} != set(current):
        raise ConfigError("the file's schedules are not the ones running; reload it first")
    wanted = {edit.id for edit in edits}
    for index in reversed(range(len(entries))):
        if entries[index].get("id") not in wanted:
            del entries[index]
    placed: set[str] = set()
    for edit in edits:
        if edit.id in current and edit.id not in placed:
            entry = next(e for e in entries if e.get("id") == edit.id)
            _change(entry, ScheduleEdit.of(current[edit.id]), edit)
        else:
            append_entry(entries, _fields(edit), "schedules", lead=lead)
        placed.add(edit.id)
    if not edits:
        del table["schedules"]


def _change(entry: Any, now: ScheduleEdit, edit: ScheduleEdit) -> None:
    for key, default in KEYS.items():
        value, was = getattr(edit, key), getattr(now, key)
        if default is None:
            set_or_drop(entry, key, value, was)
        else:
            set_key(entry, key, value, was, default=default)


def _fields(edit: ScheduleEdit) -> dict[str, Any]:
    """A new entry: its id, then each key whose value is not its default."""
    fields: dict[str, Any] = {"id": edit.id}
    for key, default in KEYS.items():
        value = getattr(edit, key)
        if value is not None and value != default:
            fields[key] = value
    return fields
