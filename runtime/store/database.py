"""What the store needs of a database engine, whichever it is: SQLite (the embedded default,
one process) or PostgreSQL (several replicas sharing one database).

The store speaks one SQL: SQLite's spelling with `?` parameters, which `dialect.py` rewrites
for PostgreSQL. A write transaction is buffered by the `Writer` and handed over whole
(`commit`), so a backend runs it in one trip; `begin` comes first and, where several
processes write, reserves the block of message and transcript numbers the transaction may
use. There, `commit` numbers the ledger events itself, at its end, under the fleet's write
lock (`numbers_events`); where one process writes, the process numbers everything.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol

from runtime.errors import ConditionFailedError

Row = Any  # a row whose columns are read by name (`row["seq"]`)


@dataclass(frozen=True, slots=True)
class Statement:
    """One statement of a write transaction. `expect`: the number of rows it must touch, or
    the whole transaction fails with `refused_as` (a condition checked and applied in one
    step; `LeaseLostError` for a fencing check). `ordered`: a reader follows the ids it gives
    (an identity column), so they must commit in their order: on PostgreSQL it runs under the
    fleet's write lock, with the ledger events."""

    sql: str
    params: Sequence[Any] | list[Sequence[Any]] = ()
    many: bool = False
    expect: int | None = None
    refused_as: type[ConditionFailedError] = ConditionFailedError
    ordered: bool = False


@dataclass(slots=True)
class Sequences:
    """Next message, event and transcript numbers; restored when a transaction fails.
    `end`: messages and transcript rows are numbered below it (the end of a reserved block),
    None: no bound (this process is the only writer)."""

    message: int = 1
    event: int = 1
    transcript: int = 1
    end: int | None = None


class Engine(StrEnum):
    SQLITE = "sqlite"
    POSTGRESQL = "postgresql"


Migrations = Mapping[str, Sequence["str | Migration"]]


# Each component's schema version; PostgreSQL takes the table through `dialect.schema`.
VERSIONS_TABLE = (
    "CREATE TABLE IF NOT EXISTS schema_versions (component TEXT PRIMARY KEY,"
    " version INTEGER NOT NULL)"
)
VERSIONS = "SELECT component, version FROM schema_versions"


@dataclass(frozen=True, slots=True)
class MigrationStep:
    component: str
    number: int  # the component's schema version once its script has run
    script: str  # in the engine's SQL


def migration_steps(
    migrations: Migrations, versions: Mapping[str, int], engine: Engine, database: str
) -> list[MigrationStep]:
    """The scripts a database whose schemas stand at `versions` still needs, in order; an
    error if one is newer than this Switchboard knows (`database` names it there)."""
    steps = []
    for component, scripts in migrations.items():
        version = int(versions.get(component, 0))
        if version > len(scripts):
            raise RuntimeError(
                f"{database}: the {component} schema is version {version}, newer than this "
                f"Switchboard knows ({len(scripts)}); upgrade Switchboard"
            )
        for number, script in enumerate(scripts[version:], start=version + 1):
            text = script if isinstance(script, str) else script.for_engine(engine)
            steps.append(MigrationStep(component, number, text))
    return steps


def migrations_line(steps: Sequence[MigrationStep]) -> str:
    """The one log line of a store's start: `store ready: 16 migrations applied (runtime 1-9,
    bridge 1-7)`, or `store up to date`."""
    applied: dict[str, list[int]] = {}
    for step in steps:
        applied.setdefault(step.component, []).append(step.number)
    spans = [
        f"{component} {numbers[0]}" + (f"-{numbers[-1]}" if len(numbers) > 1 else "")
        for component, numbers in applied.items()
        if numbers
    ]
    if not spans:
        return "store up to date"
    count = sum(len(numbers) for numbers in applied.values())
    return f"store ready: {count} migration{'s' if count > 1 else ''} applied ({', '.join(spans)})"


@dataclass(frozen=True, slots=True)
class Migration:
    """A migration whose SQL differs by engine (most are one text for both)."""

    sqlite: str
    postgresql: str

    def for_engine(self, engine: Engine) -> str:
        return self.sqlite if engine is Engine.SQLITE else self.postgresql


class Database(Protocol):
    engine: Engine
    described: str  # for people: the file, or host:port/database (never a password)
    shared: bool  # other processes may write it at the same time (replicas)
    # `commit` queues the transaction in order before it returns, so the next transaction may
    # be written while this one commits (SQLite's group commit), and what it returns does not
    # give way to a cancelled caller; else the next one waits.
    grouped: bool
    # `commit` numbers the ledger events it is given (several processes write: they get one
    # order, committed in the order of their numbers); else the caller numbers them.
    numbers_events: bool

    async def rows(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        """A read, run to its end in one call (no snapshot held between awaits)."""
        ...

    async def point(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        """As `rows`, for a read an index answers with a few rows (the reads of every turn,
        message and delivery: tests/runtime/test_query_plans.py), which an engine may run
        on the caller's own thread."""
        ...

    async def begin(self) -> Sequences | None:
        """Open a write transaction. A shared database returns the block of message and
        transcript numbers reserved for it (its `event` unused); None: this process's own
        count holds."""
        ...

    def commit(
        self, statements: list[Statement], events: list[Sequence[Any]], hint: bool
    ) -> Awaitable[int | None]:
        """Run the transaction's statements and commit: all of them or none. `events`: the
        rows (type, session_id, run_id, data, at) of ledger events for the database to
        number, after the statements (only where `numbers_events`); returns the first one's
        number (None: none given). `hint`: it writes an event other processes must hear of
        at once (`Payload.HINT`), which a shared database tells them of."""
        ...

    async def rollback(self) -> None:
        """Give up the transaction `begin` opened (nothing of it is kept)."""
        ...

    async def alone(self, sql: str, params: Sequence[Any]) -> int:
        """One statement in a short transaction of its own (it numbers nothing: a bounded
        delete, a lease renewal); how many rows it touched."""
        ...

    def notifications(self) -> AsyncIterator[str] | None:
        """What other processes committed (a ledger sequence number each time), or None
        where no other process writes."""
        ...

    async def close(self) -> None: ...
