"""Writing a value into the admin's file with tomlkit so that it loads as typed and leaves
the rest of the file as the admin laid it out: a key is written only when its value changes,
a new entry of a list of tables is indented as its siblings are."""

from __future__ import annotations

from typing import Any

import tomlkit
from tomlkit.items import AoT, Array

from config.errors import ConfigError
from config.loading import literal


def set_key(table: Any, key: str, value: Any, running: Any, *, default: Any) -> None:
    """Write `key` only if `value` differs from what runs now; an absent key stays absent
    while the value is the default."""
    if value == running:
        return
    if key not in table and value == default:
        return
    table[key] = _item(as_typed(value))


def set_or_drop(table: Any, key: str, value: Any, running: Any) -> None:
    """An optional key: written when it changes, taken out of the file when cleared."""
    if value is None:
        if key in table:
            del table[key]
    else:
        set_key(table, key, value, running, default=None)


def as_typed(value: Any) -> Any:
    """`value` as the file must hold it to load as typed."""
    if isinstance(value, str):
        return literal(value)
    if isinstance(value, list):
        return [as_typed(v) for v in value]
    return value


def append_entry(entries: Any, fields: dict[str, Any], name: str, *, lead: str = "") -> None:
    """A new entry at the end of `workspaces.{name}`: a `[[...]]` table indented as the one
    before it (the first one led by `lead`), or an inline table in an array."""
    fields = {key: as_typed(value) for key, value in fields.items()}
    if isinstance(entries, AoT):
        table = tomlkit.table()
        for key, value in fields.items():
            table[key] = _item(value)
        table.add(tomlkit.nl())
        header = entries[-1].trivia.indent if len(entries) else lead
        table.indent(len(header.lstrip("\n")))
        table.trivia.indent = header if not len(entries) else table.trivia.indent
        entries.append(table)
    elif isinstance(entries, Array):
        inline = tomlkit.inline_table()
        inline.update(fields)
        entries.append(inline)
    else:
        raise ConfigError(f"workspaces.{name} is neither a list of tables nor an array")


def lead_of(workspace: Any) -> str:
    """What goes before a new list of tables in `workspace`: a blank line unless one ends
    it, and the indentation of its operators' or agents' tables."""
    blank = "" if workspace.as_string().endswith("\n\n") else "\n"
    for key in ("agents", "operators"):
        sibling = workspace.get(key)
        if isinstance(sibling, AoT) and len(sibling):
            return blank + sibling[-1].trivia.indent.lstrip("\n")
    return blank


def _item(value: Any) -> Any:
    """A text of several lines as a multi-line string, as the admin would write it."""
    if isinstance(value, str) and "\n" in value:
        return tomlkit.string(value, multiline=True)
    return value
