"""Which migration scripts a database still needs: one plan for SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from runtime.store.database import Engine, Migration, migration_steps, migrations_line

MIGRATIONS = {
    "runtime": ["CREATE TABLE a (x TEXT)", Migration(sqlite="S2", postgresql="P2")],
    "bridge": ["CREATE TABLE b (y TEXT)"],
}


def test_a_new_database_needs_every_script_in_order_in_its_engines_sql() -> None:
    steps = migration_steps(MIGRATIONS, {}, Engine.POSTGRESQL, "db")
    assert [(s.component, s.number, s.script) for s in steps] == [
        ("runtime", 1, "CREATE TABLE a (x TEXT)"),
        ("runtime", 2, "P2"),
        ("bridge", 1, "CREATE TABLE b (y TEXT)"),
    ]
    assert migrations_line(steps) == "store ready: 3 migrations applied (runtime 1-2, bridge 1)"


def test_a_database_up_to_date_needs_none() -> None:
    steps = migration_steps(MIGRATIONS, {"runtime": 2, "bridge": 1}, Engine.SQLITE, "db")
    assert steps == []
    assert migrations_line(steps) == "store up to date"


def test_a_schema_newer_than_this_switchboard_knows_is_refused_by_name() -> None:
    with pytest.raises(RuntimeError, match=r"^db: the bridge schema is version 2, newer"):
        migration_steps(MIGRATIONS, {"runtime": 1, "bridge": 2}, Engine.SQLITE, "db")
