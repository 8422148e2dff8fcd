"""The seams between layers hold: SQL only in the store modules, and no event type or
delivery status spelled as a bare string outside its enum."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from bridge.events import BridgeEventType
from bridge.types import DeliveryStatus
from runtime.events import EventType

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("runtime", "bridge", "adapters", "config")
STORE_MODULES = ("runtime/store/", "bridge/store/")
SQL = re.compile(
    r"\bSELECT\b[\s\S]*\bFROM\b|\bINSERT\s+INTO\b|\bUPDATE\s+\w+\s+SET\b|\bDELETE\s+FROM\b"
    r"|\bCREATE\s+(TABLE|INDEX)\b"
)
RAW_ACCESS = ("read_sql", "write_sql", "delete_sql")


def sources() -> Iterator[tuple[str, ast.Module]]:
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            name = path.relative_to(ROOT).as_posix()
            yield name, ast.parse(path.read_text(), name)


def strings(tree: ast.Module) -> Iterator[ast.Constant]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node


def enum_members(tree: ast.Module) -> set[int]:
    """The ids of the strings that define an enum member (`FAILED = "failed"`): another
    enum may share a value (RunStatus.FAILED, DeliveryStatus.FAILED) and say it once."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and any(
            isinstance(b, ast.Name) and b.id == "StrEnum" for b in node.bases
        ):
            for statement in node.body:
                if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Constant):
                    found.add(id(statement.value))
    return found


def in_store(name: str) -> bool:
    return name.startswith(STORE_MODULES)


def test_sql_lives_only_in_the_store_modules() -> None:
    found = [
        f"{name}:{node.lineno}: {node.value[:60]!r}"
        for name, tree in sources()
        if not in_store(name)
        for node in strings(tree)
        if SQL.search(node.value)
    ]
    assert found == [], "SQL outside the store modules:\n" + "\n".join(found)


def test_raw_sql_access_is_private_to_the_store_modules() -> None:
    found = [
        f"{name}:{node.lineno}: .{node.attr}"
        for name, tree in sources()
        if not in_store(name)
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr in RAW_ACCESS
    ]
    assert found == [], "raw SQL calls outside the store modules:\n" + "\n".join(found)


def test_event_types_and_delivery_statuses_are_spelled_only_by_their_enums() -> None:
    enums = {
        "runtime/events.py": EventType,
        "bridge/events.py": BridgeEventType,
        "bridge/types.py": DeliveryStatus,
    }
    owner = {member.value: module for module, enum in enums.items() for member in enum}
    found = [
        f"{name}:{node.lineno}: {node.value!r} (use {enums[owner[node.value]].__name__})"
        for name, tree in sources()
        for node in strings(tree)
        if node.value in owner and name != owner[node.value] and id(node) not in enum_members(tree)
    ]
    assert found == [], "bare strings for enum members:\n" + "\n".join(found)


def test_the_checks_catch_what_they_look_for() -> None:
    """The patterns themselves: a check that cannot fail is no check."""
    assert SQL.search("SELECT seq FROM cursors WHERE name = ?")
    assert SQL.search("INSERT INTO deliveries (id) VALUES (?)")
    assert SQL.search("UPDATE deliveries SET status = ?")
    assert not SQL.search("Select a workspace from the list")
    assert "delivery_failed" in {m.value for m in BridgeEventType}
