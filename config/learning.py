"""The admin's file learns a platform's section (`config/platform_sections.py`): each
workspace may then hold `[workspaces.<name>]`, each operator `<name>_user_id`, each binding
its conversation's key (`telegram_chat`), and `notify_via` and a DM binding's `platform` may
name it. The models' fields are the ones declared in `schema.py` and `bindings.py` plus those
of the platforms known now, in the order of their names; their validators read the same
table. Pydantic has no public way to add a field to a model built already: the fields are
set, then the models rebuilt, here alone."""

from __future__ import annotations

from typing import Any, Literal, cast

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from config.bindings import BindingConfig
from config.platform_sections import PlatformSection, add, remove, sections
from config.schema import OperatorConfig, SwitchboardConfig, WorkspaceConfig

CONSOLE = "console"  # the terminal's section: no platform's, always known

_DECLARED: dict[type[BaseModel], dict[str, FieldInfo]] = {
    model: dict(model.__pydantic_fields__)
    for model in (BindingConfig, OperatorConfig, WorkspaceConfig)
}


def learn(section: PlatformSection[BaseModel]) -> None:
    add(section)
    _apply()


def forget(name: str) -> None:
    """A platform's section learned for a while (a test's platform) unlearned."""
    remove(name)
    _apply()


def _apply() -> None:
    known = sections()
    names = cast(Any, Literal)[(*(s.name for s in known), CONSOLE)]
    _fields(WorkspaceConfig, {s.name: _optional(s.model) for s in known}, before=CONSOLE)
    operators = {s.operator_key: _optional(int if s.numbers else str) for s in known}
    operators["notify_via"] = _optional(names)
    _fields(OperatorConfig, operators, before="notify_via")
    places = {s.binding_key: _optional(int if s.numbers else str) for s in known}
    places |= {s.topic_key: _optional(int) for s in known if s.topics}
    _fields(BindingConfig, places | {"platform": _optional(names)}, before="dm")
    for model in (BindingConfig, OperatorConfig, WorkspaceConfig, SwitchboardConfig):
        model.model_rebuild(force=True)


def _optional(annotation: Any) -> FieldInfo:
    return FieldInfo.from_annotated_attribute(annotation | None, None)


def _fields(model: type[BaseModel], learned: dict[str, FieldInfo], *, before: str) -> None:
    """The model's declared fields, with `learned` before `before` (or in place of one)."""
    fields: dict[str, FieldInfo] = {}
    for name, info in _DECLARED[model].items():
        if name == before:
            fields |= learned
        fields.setdefault(name, info)
    model.__pydantic_fields__ = fields


_apply()
