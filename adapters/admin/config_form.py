"""The workspace settings form: its fields read into a `WorkspaceEdit`, or what is wrong with
them. Field names (stable, the browser tests use them):

- `version`: the workspace as the page showed it; a form for an older one is refused;
- `queue_mode`;
- `op-N-id`, `op-N-<platform>_user_id` (`op-N-telegram_user_id`), `op-N-remove` for the N-th
  operator (from 0), `op-new-*` for one to add, `primary` = N or `new`;
- `<platform>_<allow list>` (`telegram_chats`, `slack_channels`): comma- or line-separated;
- `agent-N-system_prompt`, `agent-N-tools` (comma-separated) for the N-th agent.

The platforms' fields are those of the sections the config knows (`config/platform_sections.py`);
the page shows them from the registered platforms (`platform_fields.py`)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, cast, get_args

from pydantic import BaseModel

from config.edit import STALE, AgentEdit, OperatorEdit, WorkspaceEdit, version
from config.platform_sections import PlatformSection, sections
from config.schema import QueueModeName, WorkspaceConfig

__all__ = ["QUEUE_MODES", "FormErrors", "allow_list_field", "read_edit", "version"]

QUEUE_MODES: tuple[str, ...] = get_args(QueueModeName)
_SEPARATORS = re.compile(r"[,\s]+")
_NUMBER = re.compile(r"-?\d{1,20}")


def _text(form: Mapping[str, Any], name: str) -> str:
    value = form.get(name, "")
    return value.strip() if isinstance(value, str) else ""


def _items(text: str) -> list[str]:
    return [item for item in _SEPARATORS.split(text) if item]


class FormErrors(Exception):
    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


def read_edit(form: Mapping[str, Any], workspace: WorkspaceConfig) -> WorkspaceEdit:
    """The edit the form asks for; FormErrors says what is wrong with it."""
    problems: list[str] = []
    if _text(form, "version") != version(workspace):
        raise FormErrors([STALE])
    mode = _text(form, "queue_mode")
    if mode not in QUEUE_MODES:
        problems.append(f"queue mode must be one of {', '.join(QUEUE_MODES)}")
    remove = frozenset(i for i in range(len(workspace.operators)) if _text(form, f"op-{i}-remove"))
    operators = _operators(form, len(workspace.operators), remove, problems)
    allowed = {
        s.name: _allowed(form, s, problems) for s in sections() if s.of(workspace) is not None
    }
    if problems:
        raise FormErrors(problems)
    return WorkspaceEdit(
        queue_mode=cast(QueueModeName, mode),  # one of QUEUE_MODES: checked above
        operators=operators,
        remove=remove,
        agents=_agents(form, workspace),
        allowed=allowed,
        based_on=version(workspace),
    )


def _operators(
    form: Mapping[str, Any], count: int, remove: frozenset[int], problems: list[str]
) -> tuple[OperatorEdit, ...]:
    """The `count` operators shown, less those to remove, and the new one if it has an id;
    what is wrong with them is added to `problems`."""
    primary = _text(form, "primary")
    operators: list[OperatorEdit] = []
    for key in [*(str(i) for i in range(count) if i not in remove), "new"]:
        operator_id = _text(form, f"op-{key}-id")
        if key == "new" and not operator_id:
            continue
        users: dict[str, str | int] = {}
        for s in sections():
            said = _text(form, f"op-{key}-{s.operator_key}")
            if s.numbers and said and not _NUMBER.fullmatch(said):
                problems.append(f"operator {operator_id or key}: a {s.title} user id is a number")
            elif said:
                users[s.operator_key] = int(said) if s.numbers else said
        operators.append(OperatorEdit(id=operator_id, primary=primary == key, users=users))
    return tuple(operators)


def allow_list_field(s: PlatformSection[BaseModel]) -> str:
    """The form's field for the platform's allow list: `telegram_chats`."""
    return f"{s.name}_{s.allowed}"


def _allowed(
    form: Mapping[str, Any], s: PlatformSection[BaseModel], problems: list[str]
) -> tuple[str | int, ...]:
    """The platform's allow list as the form has it."""
    found = _items(_text(form, allow_list_field(s)))
    if not s.numbers:
        return tuple(found)
    wrong = [c for c in found if not _NUMBER.fullmatch(c)]
    if wrong:
        problems.append(f"a {s.title} {s.conversation} id is a number, not {wrong[0]!r}")
    return tuple(int(c) for c in found if c not in wrong)


def _agents(form: Mapping[str, Any], workspace: WorkspaceConfig) -> tuple[AgentEdit, ...]:
    return tuple(
        AgentEdit(
            id=agent.id,
            system_prompt=str(form.get(f"agent-{i}-system_prompt", "")).replace("\r\n", "\n"),
            tools=tuple(_items(_text(form, f"agent-{i}-tools"))),
        )
        for i, agent in enumerate(workspace.agents)
    )
