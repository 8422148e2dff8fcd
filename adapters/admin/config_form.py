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
from dataclasses import dataclass
from typing import Any, cast, get_args

from pydantic import BaseModel

from config.edit import STALE, AgentEdit, OperatorEdit, WorkspaceEdit, version
from config.platform_sections import PlatformSection, sections
from config.schema import QueueModeName, WorkspaceConfig

__all__ = [
    "QUEUE_MODES",
    "FormErrors",
    "Located",
    "allow_list_field",
    "first_of",
    "located",
    "read_edit",
    "refusal",
    "version",
]

QUEUE_MODES: tuple[str, ...] = get_args(QueueModeName)
_SEPARATORS = re.compile(r"[,\s]+")
_NUMBER = re.compile(r"-?\d{1,20}")


def _text(form: Mapping[str, Any], name: str) -> str:
    value = form.get(name, "")
    return value.strip() if isinstance(value, str) else ""


def _items(text: str) -> list[str]:
    return [item for item in _SEPARATORS.split(text) if item]


class FormErrors(Exception):
    """What is wrong with a form: `problems` for the page's summary, and `fields`, a field's
    name to what is wrong with it, for the page to mark the field and put the focus on it."""

    def __init__(self, problems: list[str], fields: Mapping[str, str] | None = None) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems
        self.fields = dict(fields or {})


@dataclass(frozen=True, slots=True)
class Located:
    """One problem of a refused config edit: where in the file's keys (`workspaces`, 0,
    `schedules`, 1, `cron`), the ids of what it is in ("acme", "tick"), what is wrong."""

    path: tuple[str | int, ...]
    ids: tuple[str, ...]
    what: str


# a refused edit's problem line: `  - workspaces[0].schedules[1].cron ("acme", "tick"), line 46:
# cron '61 * * * *' is not valid ...`; the line before them names the file
_LINE = re.compile(
    r"^\s*-\s+(?P<path>[A-Za-z_]\w*(?:\[\d+\]|\.\w+)*)(?: \((?P<ids>[^)]*)\))?"
    r"(?:, line \d+)?: (?P<what>.+)$"
)
_LINE_NUMBER = re.compile(r"\s*\(line \d+\)$")
_HEAD = re.compile(r": \d+ problem\(s\):$")


def located(report: str) -> list[Located | str]:
    """A refused edit's words, each problem with where it is; a line that names no place
    (a stale page) as it is. The file's name and line numbers are not the admin's words."""
    found: list[Located | str] = []
    for line in report.splitlines():
        if _HEAD.search(line) or not line.strip():
            continue
        if m := _LINE.match(line):
            path = tuple(int(i) if i else k for k, i in re.findall(r"(\w+)|\[(\d+)\]", m["path"]))
            ids = tuple(re.findall(r'"([^"]*)"', m["ids"] or ""))
            found.append(Located(path, ids, _LINE_NUMBER.sub("", m["what"])))
        else:
            found.append(line.strip())
    return found


def read_edit(form: Mapping[str, Any], workspace: WorkspaceConfig) -> WorkspaceEdit:
    """The edit the form asks for; FormErrors says what is wrong with it."""
    problems: dict[str, str] = {}  # a field's name -> what is wrong with it
    if _text(form, "version") != version(workspace):
        raise FormErrors([STALE])
    mode = _text(form, "queue_mode")
    if mode not in QUEUE_MODES:
        problems["queue_mode"] = f"the queue mode is one of {', '.join(QUEUE_MODES)}"
    remove = frozenset(i for i in range(len(workspace.operators)) if _text(form, f"op-{i}-remove"))
    operators = _operators(form, len(workspace.operators), remove, problems)
    allowed = {
        s.name: _allowed(form, s, problems) for s in sections() if s.of(workspace) is not None
    }
    if problems:
        raise FormErrors(list(problems.values()), problems)
    return WorkspaceEdit(
        queue_mode=cast(QueueModeName, mode),  # one of QUEUE_MODES: checked above
        operators=operators,
        remove=remove,
        agents=_agents(form, workspace),
        allowed=allowed,
        based_on=version(workspace),
    )


def _operators(
    form: Mapping[str, Any], count: int, remove: frozenset[int], problems: dict[str, str]
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
                field = f"op-{key}-{s.operator_key}"
                who = f"operator {operator_id}" if operator_id else "the new operator"
                problems[field] = f"{who}: a {s.title} user id is a number, not {said!r}"
            elif said:
                users[s.operator_key] = int(said) if s.numbers else said
        operators.append(OperatorEdit(id=operator_id, primary=primary == key, users=users))
    return tuple(operators)


def allow_list_field(s: PlatformSection[BaseModel]) -> str:
    """The form's field for the platform's allow list: `telegram_chats`."""
    return f"{s.name}_{s.allowed}"


def _allowed(
    form: Mapping[str, Any], s: PlatformSection[BaseModel], problems: dict[str, str]
) -> tuple[str | int, ...]:
    """The platform's allow list as the form has it."""
    found = _items(_text(form, allow_list_field(s)))
    if not s.numbers:
        return tuple(found)
    wrong = [c for c in found if not _NUMBER.fullmatch(c)]
    if wrong:
        field = allow_list_field(s)
        problems[field] = f"a {s.title} {s.conversation} id is a number, not {wrong[0]!r}"
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


def refusal(report: str, form: Mapping[str, Any], workspace: WorkspaceConfig) -> FormErrors:
    """A refused settings edit in the admin's words (not the config's key paths), each problem
    of a field of the form tied to that field."""
    lines: list[str] = []
    fields: dict[str, str] = {}
    for problem in located(report):
        if isinstance(problem, str):
            lines.append(problem)
            continue
        lines.append(problem.what)
        field = _settings_field(problem, form, workspace)
        if field and field not in fields:
            fields[field] = problem.what
    return FormErrors(lines, fields)


def _settings_field(
    problem: Located, form: Mapping[str, Any], workspace: WorkspaceConfig
) -> str | None:
    """The settings form's field a problem is about: `queue_mode`, `agent-1-tools`,
    `op-0-telegram_user_id` (an operator found by its id), `telegram_chats`."""
    path = problem.path[2:] if problem.path[:1] == ("workspaces",) else problem.path
    key = path[-1] if path else None
    if path[:1] == ("agents",) and len(path) == 3:
        field = f"agent-{path[1]}-{key}"
    elif path[:1] == ("operators",) and len(path) == 3:
        shown = [o.id for o in workspace.operators]
        who = problem.ids[-1] if problem.ids else None
        row = str(shown.index(who)) if who in shown else "new"
        field = f"op-{row}-{key}"
    elif len(path) == 2 and all(isinstance(p, str) for p in path):
        field = f"{path[0]}_{key}"  # a platform's allow list: telegram_chats
    else:
        field = str(key)
    return field if field in form else None


def first_of(form_order: list[str], fields: Mapping[str, str]) -> str | None:
    """The refused field that comes first in the form: the one the focus goes to."""
    return next((f for f in form_order if f in fields), next(iter(fields), None))
