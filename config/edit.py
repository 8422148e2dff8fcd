"""The console's edits of one workspace, written back into the admin's file with tomlkit: only
the keys whose value changes are touched, so comments, layout and `${VAR}` references
elsewhere (and in every key left as it was) stay byte for byte. What is typed in the console is
stored as typed: a `${NAME}` in it is written `$${NAME}`, the loader's literal, so nothing typed
there is ever filled from the environment (an admin of one workspace would read the process's
secrets through it)."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.items import AoT, Array

from config.errors import ConfigError
from config.loading import literal
from config.schema import QueueModeName, WorkspaceConfig


@dataclass(frozen=True, slots=True)
class OperatorEdit:
    id: str
    primary: bool
    slack_user_id: str | None = None
    telegram_user_id: int | None = None


@dataclass(frozen=True, slots=True)
class AgentEdit:
    id: str  # which agent (agents are not added or renamed here)
    system_prompt: str
    tools: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class WorkspaceEdit:
    """What the console edits of a workspace; the rest of it stays as the file has it."""

    queue_mode: QueueModeName
    # In the order of the file's operators, which `remove` drops; then any new ones.
    operators: tuple[OperatorEdit, ...]
    remove: frozenset[int]
    agents: tuple[AgentEdit, ...]
    telegram_chats: tuple[int, ...] | None = None  # None: the workspace has no Telegram
    slack_channels: tuple[str, ...] | None = None
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
    _set(table, "queue_mode", change.queue_mode, running.queue_mode, default="steer")
    _operators(table, running, change)
    for agent in change.agents:
        _agent(table, running, agent)
    if change.telegram_chats is not None and running.telegram is not None:
        chats = list(change.telegram_chats)
        _set(table["telegram"], "chats", chats, running.telegram.chats, default=[])
    if change.slack_channels is not None and running.slack is not None:
        channels = list(change.slack_channels)
        _set(table["slack"], "channels", channels, running.slack.channels, default=[])
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


def _set(table: Any, key: str, value: Any, running: Any, *, default: Any) -> None:
    """Write `key` only if `value` differs from what runs now; an absent key stays absent
    while the value is the default."""
    if value == running:
        return
    if key not in table and value == default:
        return
    value = as_typed(value)
    if isinstance(value, str) and "\n" in value:
        table[key] = tomlkit.string(value, multiline=True)
    else:
        table[key] = value


def as_typed(value: Any) -> Any:
    """`value` as the file must hold it to load as typed."""
    if isinstance(value, str):
        return literal(value)
    if isinstance(value, list):
        return [as_typed(v) for v in value]
    return value


def _operators(table: Any, running: WorkspaceConfig, change: WorkspaceEdit) -> None:
    operators = table["operators"]
    existing = len(running.operators)
    for index in sorted(change.remove, reverse=True):
        if index < existing:
            del operators[index]
    kept = [i for i in range(existing) if i not in change.remove]
    for position, (index, edit) in enumerate(zip(kept, change.operators, strict=False)):
        current = running.operators[index]
        entry = operators[position]
        _set(entry, "id", edit.id, current.id, default=None)
        _set(entry, "primary", edit.primary, current.primary, default=False)
        for key in ("slack_user_id", "telegram_user_id"):
            value, now = getattr(edit, key), getattr(current, key)
            if value is None and key in entry and now is not None:
                del entry[key]
            elif value is not None:
                _set(entry, key, value, now, default=None)
    for edit in change.operators[len(kept) :]:
        _append(operators, _operator_fields(edit))


def _operator_fields(edit: OperatorEdit) -> dict[str, Any]:
    fields: dict[str, Any] = {"id": edit.id}
    if edit.primary:
        fields["primary"] = True
    if edit.slack_user_id is not None:
        fields["slack_user_id"] = edit.slack_user_id
    if edit.telegram_user_id is not None:
        fields["telegram_user_id"] = edit.telegram_user_id
    return fields


def _append(operators: Any, fields: dict[str, Any]) -> None:
    fields = {key: as_typed(value) for key, value in fields.items()}
    if isinstance(operators, AoT):
        table = tomlkit.table()
        table.update(fields)
        table.add(tomlkit.nl())
        operators.append(table)
    elif isinstance(operators, Array):
        inline = tomlkit.inline_table()
        inline.update(fields)
        operators.append(inline)
    else:
        raise ConfigError("workspaces.operators is neither a list of tables nor an array")


def _agent(table: Any, running: WorkspaceConfig, edit: AgentEdit) -> None:
    current = next((a for a in running.agents if a.id == edit.id), None)
    entry = next((a for a in table["agents"] if a.get("id") == edit.id), None)
    if current is None or entry is None:
        raise ConfigError(f"agent {edit.id} is not in the file; reload it first")
    _set(entry, "system_prompt", edit.system_prompt, current.system_prompt, default="")
    tools = list(edit.tools)
    _set(entry, "tools", tools, current.tools, default=["notify_operator", "sleep", "spawn_agent"])
