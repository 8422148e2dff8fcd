"""The console's edits of one workspace, written back into the admin's file with tomlkit: only
the keys whose value changes are touched, so comments, layout and `${VAR}` references
elsewhere (and in every key left as it was) stay byte for byte. What is typed in the console is
stored as typed: a `${NAME}` in it is written `$${NAME}`, the loader's literal, so nothing typed
there is ever filled from the environment (an admin of one workspace would read the process's
secrets through it)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomlkit

from config.errors import ConfigError
from config.platform_sections import sections
from config.schedule_edit import ScheduleEdit, edit_schedules
from config.schema import QueueModeName, WorkspaceConfig
from config.toml_edit import append_entry, set_key, set_or_drop

__all__ = [
    "STALE",
    "AgentEdit",
    "OperatorEdit",
    "ScheduleEdit",
    "WorkspaceEdit",
    "edit_workspace",
    "version",
    "write_atomically",
]


@dataclass(frozen=True, slots=True)
class OperatorEdit:
    id: str
    primary: bool
    # Their id on each platform, by its key (`telegram_user_id`); a key left out is dropped.
    users: Mapping[str, str | int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class AgentEdit:
    id: str  # which agent (agents are not added or renamed here)
    system_prompt: str
    tools: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class WorkspaceEdit:
    """What the console edits of a workspace; the rest of it stays as the file has it. A
    part left None (or empty) is not touched."""

    queue_mode: QueueModeName | None = None
    # In the order of the file's operators, which `remove` drops; then any new ones.
    operators: tuple[OperatorEdit, ...] | None = None
    remove: frozenset[int] = frozenset()
    agents: tuple[AgentEdit, ...] = ()
    # By platform, its allow list as it is to be (`chats`, `channels`); a platform the
    # workspace has no section for, or one left out, is not touched.
    allowed: Mapping[str, tuple[str | int, ...]] = field(default_factory=dict)
    # The workspace's schedules as they are to be, in order: one running that is not here is
    # removed, one here that is not running is added (an id twice is added twice, and the
    # loader refuses it).
    schedules: tuple[ScheduleEdit, ...] | None = None
    # The `version` of the workspace the edit was made against (its operators are indexed
    # in it): checked again where the edit is applied. None: not checked.
    based_on: str | None = None


STALE = "the workspace changed since this page was loaded: open it again and redo the edit"


def version(workspace: WorkspaceConfig) -> str:
    """A fingerprint of the workspace as configured (secrets masked, as pydantic dumps them)."""
    return hashlib.sha256(workspace.model_dump_json().encode()).hexdigest()[:16]


def edit_workspace(text: str, running: WorkspaceConfig, change: WorkspaceEdit) -> str:
    """`text` with the workspace's keys that `change` makes differ from `running` (the
    config now in force, `${VAR}`s filled) rewritten."""
    document = tomlkit.parse(text)
    table = _workspace_table(document, running.id)
    if change.queue_mode is not None:
        set_key(table, "queue_mode", change.queue_mode, running.queue_mode, default="steer")
    if change.operators is not None:
        _operators(table, running, change.operators, change.remove)
    for agent in change.agents:
        _agent(table, running, agent)
    for s in sections():
        if s.name in change.allowed and (found := s.of(running)) is not None:
            now = list(change.allowed[s.name])
            set_key(table[s.name], s.allowed, now, getattr(found, s.allowed), default=[])
    if change.schedules is not None:
        edit_schedules(table, running, change.schedules)
    return tomlkit.dumps(document)


def write_atomically(path: Path, text: str) -> None:
    """A temporary file beside it, then a rename: a crash leaves the old file or the new."""
    temporary = path.with_name(f".{path.name}.edit-{os.getpid()}")
    try:
        temporary.write_text(text, encoding="utf-8")
        if path.exists():
            os.chmod(temporary, path.stat().st_mode)
        temporary.replace(path)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise ConfigError(f"{path}: cannot be written ({exc.strerror}).") from None


def _workspace_table(document: Any, workspace_id: str) -> Any:
    for table in document.get("workspaces", []):
        if table.get("id") == workspace_id:
            return table
    raise ConfigError(f"workspace {workspace_id} is not in the file; reload it first")


def _operators(
    table: Any, running: WorkspaceConfig, edits: tuple[OperatorEdit, ...], remove: frozenset[int]
) -> None:
    operators = table["operators"]
    existing = len(running.operators)
    for index in sorted(remove, reverse=True):
        if index < existing:
            del operators[index]
    kept = [i for i in range(existing) if i not in remove]
    for position, (index, edit) in enumerate(zip(kept, edits, strict=False)):
        current = running.operators[index]
        entry = operators[position]
        set_key(entry, "id", edit.id, current.id, default=None)
        set_key(entry, "primary", edit.primary, current.primary, default=False)
        for key in (s.operator_key for s in sections()):
            set_or_drop(entry, key, edit.users.get(key), getattr(current, key))
    for edit in edits[len(kept) :]:
        append_entry(operators, _operator_fields(edit), "operators")


def _operator_fields(edit: OperatorEdit) -> dict[str, Any]:
    fields: dict[str, Any] = {"id": edit.id}
    if edit.primary:
        fields["primary"] = True
    keys = [s.operator_key for s in sections()]
    return fields | {key: edit.users[key] for key in keys if key in edit.users}


def _agent(table: Any, running: WorkspaceConfig, edit: AgentEdit) -> None:
    current = next((a for a in running.agents if a.id == edit.id), None)
    entry = next((a for a in table["agents"] if a.get("id") == edit.id), None)
    if current is None or entry is None:
        raise ConfigError(f"agent {edit.id} is not in the file; reload it first")
    set_key(entry, "system_prompt", edit.system_prompt, current.system_prompt, default="")
    tools = list(edit.tools)
    set_key(
        entry, "tools", tools, current.tools, default=["notify_operator", "sleep", "spawn_agent"]
    )
