"""PostgreSQL behind the store, for several replicas sharing one database (psycopg 3).

Reads go through a small pool of autocommit connections. Writes go through one connection of
this process's own, and take the fleet's one write lock only for the ledger, at their end:

- Messages and transcript rows are ordered only within their session (a session's queue, its
  transcript), so they need no fleet-wide order, only one that never goes back within a
  session, wherever the session's writes come from. `begin` reserves a fresh block of numbers
  for each transaction (`nextval` of the `number_blocks` sequence, which steps by a block: one
  round trip, no lock), and the Writer numbers the transaction's rows from it. A sequence
  hands out ever larger values, so a block reserved after a transaction of any replica has
  committed lies past every number that transaction wrote: a session's rows written after
  another's are numbered after them, even when they come from another replica. (A block kept
  from one transaction to the next could have been reserved before another replica's latest
  writes to the same session, and number below them; reserving per transaction costs the
  round trip `begin` made before, when it took the lock there.) Numbers left unused in a block
  are gaps; none is ever given twice.
- Ledger events are one global order, and must commit in the order of their numbers (a reader
  following the ledger by a cursor would skip one committed late). The commit's pipeline runs
  the transaction's statements first, without the lock; its last statements take the fleet's
  write lock (a transaction-scoped advisory lock), number the events past the newest one
  committed and insert them, and COMMIT. The lock is held for the tail of that one round trip
  and the commit; a transaction without ledger events takes no lock at all.
- A statement whose identity ids a reader follows by a cursor (`Statement.ordered`: the shared
  intake) runs after the lock is taken, so those ids too commit in their order.

A commit with an event the other replicas must hear of at once (`Payload.HINT`) notifies them
(LISTEN/NOTIFY, payload-free, on a connection of its own: never through a pooler in
transaction mode); the rest reach their feeds at their next commit or read (`publishing.py`).
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from runtime.errors import StoreConflictError, StoreUnavailableError
from runtime.store import dialect
from runtime.store.database import (
    VERSIONS,
    VERSIONS_TABLE,
    Engine,
    Migrations,
    Row,
    Sequences,
    Statement,
    migration_steps,
    migrations_line,
)

log = logging.getLogger(__name__)

LEDGER_CHANNEL = "switchboard_ledger"
WRITE_LOCK = 0x5357_4244  # pg_advisory_xact_lock key of the fleet's one write lock
MIGRATION_LOCK = 0x5357_4D47  # held while one replica migrates; the others wait
CONNECT_TIMEOUT_S = 10

# A block of numbers: the first, and how many (the sequence's step).
TAKE_BLOCK = (
    "SELECT nextval('number_blocks') AS start, seqincrement AS size FROM pg_sequence"
    " WHERE seqrelid = 'number_blocks'::regclass"
)
TAKE_WRITE_LOCK = "SELECT pg_advisory_xact_lock(%s)"
# The transaction's ledger events, numbered on from the newest committed (read under the
# write lock, from the primary key's last entry), in the order given; the first's number.
INSERT_NUMBERED_EVENTS = (
    "WITH numbered AS (INSERT INTO events (seq, type, session_id, run_id, data, at)"
    " SELECT newest.seq + e.ord, e.type, e.session_id, e.run_id, e.data, e.at"
    " FROM (SELECT COALESCE(MAX(seq), 0) AS seq FROM events) AS newest,"
    " unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::float8[])"
    " WITH ORDINALITY AS e(type, session_id, run_id, data, at, ord)"
    " RETURNING seq) SELECT MIN(seq) AS first FROM numbered"
)


def described(url: str) -> str:
    """host:port/database of a URL, for people and logs: never its password."""
    try:
        info = conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "PostgreSQL (unreadable URL)"
    host = info.get("host") or "localhost"
    port = info.get("port") or "5432"
    where = host if str(host).startswith("/") else f"{host}:{port}"
    return f"PostgreSQL {where}/{info.get('dbname') or info.get('user') or 'postgres'}"


def _cancelling() -> bool:
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


def _adapted(params: Sequence[Any]) -> Sequence[Any]:
    """SQLite stores a bool as 0/1 in an INTEGER column; PostgreSQL wants the number too."""
    return [int(p) if isinstance(p, bool) else p for p in params]


async def _execute(cursor: psycopg.AsyncCursor[Any], s: Statement, index: int) -> None:
    """One statement of a commit's pipeline; `index` names it if its condition fails."""
    sql = s.sql if s.expect is None else checked(s.sql, s.expect, index)
    if s.many:
        await cursor.executemany(dialect.statement(sql), [_adapted(p) for p in s.params])
    else:
        await cursor.execute(dialect.statement(sql), _adapted(s.params))


def _columns(events: list[Sequence[Any]]) -> list[list[Any]]:
    """Event rows (type, session_id, run_id, data, at) as the five arrays the insert takes."""
    types, sessions, runs, data, at = (list(column) for column in zip(*events, strict=True))
    return [[str(t) for t in types], sessions, runs, data, [float(a) for a in at]]


async def _connect(url: str, **kwargs: Any) -> psycopg.AsyncConnection[Any]:
    try:
        return await psycopg.AsyncConnection.connect(
            url, connect_timeout=CONNECT_TIMEOUT_S, application_name="switchboard", **kwargs
        )
    except psycopg.OperationalError as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise StoreUnavailableError(
            f"cannot connect to {described(url)}: {reason}. Check [storage] url (host, port,"
            " database, user, password) and that the server is running."
        ) from exc


class PostgresDatabase:
    engine = Engine.POSTGRESQL
    shared = True
    grouped = False  # this process's transactions take the one write connection in turn
    numbers_events = True

    def __init__(
        self, url: str, writer: psycopg.AsyncConnection[Any], pool: AsyncConnectionPool
    ) -> None:
        self._url = url
        self._writer = writer
        self._pool = pool
        self.described = described(url)

    @classmethod
    async def open(cls, url: str, migrations: Migrations) -> PostgresDatabase:
        migrator = await _connect(url, autocommit=True)
        try:
            await migrate(migrator, migrations, described(url))
        finally:
            await migrator.close()
        writer = await _connect(url, row_factory=dict_row)
        pool: AsyncConnectionPool = AsyncConnectionPool(
            url,
            min_size=1,
            max_size=8,
            kwargs={
                "autocommit": True,
                "row_factory": dict_row,
                "application_name": "switchboard",
                "connect_timeout": CONNECT_TIMEOUT_S,
            },
            open=False,
            name="switchboard-reads",
        )
        await pool.open(wait=True, timeout=CONNECT_TIMEOUT_S)
        return cls(url, writer, pool)

    @asynccontextmanager
    async def _reader(self) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        """A pooled connection. psycopg_pool waits for one with `asyncio.wait_for`, which on
        Python 3.11 loses a cancellation that comes as the connection is handed over (the
        cancelled task went on running: a dispatcher stopped at start-up still dispatched);
        such a cancellation is raised here."""
        task = asyncio.current_task()
        before = task.cancelling() if task is not None else 0
        async with self._pool.connection() as conn:
            if task is not None and task.cancelling() > before:
                raise asyncio.CancelledError
            yield conn

    async def rows(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        async with self._reader() as conn:
            cursor = await conn.execute(dialect.statement(sql), _adapted(params))
            return await cursor.fetchall() if cursor.description else []

    async def point(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        return await self.rows(sql, params)  # a round trip to the server either way

    async def begin(self) -> Sequences:
        """A fresh block of message and transcript numbers for this transaction (module
        docstring: why fresh each time); one round trip, no lock. The transaction it opens
        holds no snapshot between statements (read committed) and writes nothing yet; the
        commit's pipeline goes on in it."""
        if self._writer.closed or self._writer.broken:  # the server restarted, or cut it off
            log.warning("store write connection lost; connecting again")
            self._writer = await _connect(self._url, row_factory=dict_row)
        cursor = await self._writer.execute(TAKE_BLOCK)
        row = await cursor.fetchone()
        assert row is not None
        start = int(row["start"])
        return Sequences(message=start, event=0, transcript=start, end=start + int(row["size"]))

    async def commit(
        self, statements: list[Statement], events: list[Sequence[Any]], hint: bool
    ) -> int | None:
        """Every statement, then the ledger events numbered under the fleet's write lock,
        then the COMMIT, in one pipeline: one round trip, the lock held only for its tail. A
        statement that must touch so many rows (a fence, a budget's room) checks it in the
        database (`checked`), failing the transaction there, before the lock is asked for."""
        if hint:
            statements = [*statements, NOTIFY]
        try:
            async with self._writer.cursor() as cursor, self._writer.cursor() as numbered:
                ordered = [(i, s) for i, s in enumerate(statements) if s.ordered]
                async with self._writer.pipeline():
                    for index, s in enumerate(statements):
                        if not s.ordered:
                            await _execute(cursor, s, index)
                    if events or ordered:
                        await cursor.execute(TAKE_WRITE_LOCK, (WRITE_LOCK,))
                    for index, s in ordered:  # their ids then commit in their order
                        await _execute(cursor, s, index)
                    if events:
                        await numbered.execute(INSERT_NUMBERED_EVENTS, _columns(events))
                    await self._writer.commit()
                row = await numbered.fetchone() if events else None
            return None if row is None else int(row["first"])
        except pg_errors.UniqueViolation as exc:
            await self.rollback()
            raise StoreConflictError(str(exc)) from exc
        except pg_errors.InvalidTextRepresentation as exc:
            await self.rollback()
            failed = CONDITION_FAILED.fullmatch(_quoted(exc.diag.message_primary))
            if failed is None:
                raise
            s = statements[int(failed.group(1))]
            raise s.refused_as(f"condition failed: {s.sql}") from None
        except BaseException:
            await self.rollback()
            raise

    async def rollback(self) -> None:
        if self._writer.closed:
            return
        await self._writer.rollback()

    async def alone(self, sql: str, params: Sequence[Any]) -> int:
        async with self._reader() as conn:
            cursor = await conn.execute(dialect.statement(sql), _adapted(params))
            return cursor.rowcount

    def notifications(self) -> AsyncIterator[str]:
        return self._listen()

    async def _listen(self) -> AsyncIterator[str]:
        """A notice each time a replica (this one too) commits an event others must hear of
        at once (payload-free). A lost connection is opened again; "" is yielded then, since
        notices may have been missed meanwhile."""
        delay = 0.2
        while True:
            try:
                conn = await _connect(self._url, autocommit=True)
            except StoreUnavailableError as exc:
                if _cancelling():
                    raise asyncio.CancelledError from exc
                log.warning("ledger listener cannot connect", extra={"error": str(exc)})
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)
                continue
            delay = 0.2
            try:
                await conn.execute(f"LISTEN {LEDGER_CHANNEL}")
                yield ""
                async for notice in conn.notifies():
                    yield notice.payload
            except psycopg.OperationalError as exc:
                if _cancelling():  # psycopg turns a cancelled wait into QueryCanceled
                    raise asyncio.CancelledError from exc
                log.warning("ledger listener lost its connection", extra={"error": str(exc)})
            finally:
                await conn.close()

    async def close(self) -> None:
        await self._pool.close()
        await self._writer.close()


CONDITION = "switchboard-condition-"
CONDITION_FAILED = re.compile(rf"{CONDITION}(\d+):\d+")


def _quoted(message: str | None) -> str:
    """The value an "invalid input syntax" error quotes: only our own cast's is a match."""
    _, _, rest = (message or "").partition('"')
    return rest[:-1] if rest.endswith('"') else ""


def checked(sql: str, expect: int, index: int) -> str:
    """`sql`, which must touch `expect` rows: otherwise it fails in the database, naming
    `index` (a cast that cannot succeed, built from the count so that it is never folded
    ahead of time), and the whole transaction with it."""
    return (
        f"WITH touched AS ({sql} RETURNING 1) SELECT CASE WHEN count(*) = {expect} THEN 0"
        f" ELSE CAST('{CONDITION}{index}:' || count(*) AS integer) END FROM touched"
    )


# Tells every listening replica the ledger has grown, after the commit. Payload-free, and only
# for a commit other replicas must hear of at once (`Payload.HINT`): PostgreSQL takes a
# database-wide lock to queue a notification at commit, and each wakes every listener.
NOTIFY = Statement(f"NOTIFY {LEDGER_CHANNEL}")


async def migrate(conn: psycopg.AsyncConnection[Any], migrations: Migrations, where: str) -> None:
    """Every component's schema brought up to date, by one replica at a time."""
    await conn.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK,))
    try:
        await conn.execute(dialect.schema(VERSIONS_TABLE))
        versions = dict(await (await conn.execute(VERSIONS)).fetchall())
        steps = migration_steps(migrations, versions, Engine.POSTGRESQL, where)
        for step in steps:
            async with conn.transaction():
                await conn.execute(dialect.schema(step.script))
                await conn.execute(
                    "INSERT INTO schema_versions VALUES (%s, %s) ON CONFLICT (component)"
                    " DO UPDATE SET version = excluded.version",
                    (step.component, step.number),
                )
            log.debug("store migrated", extra={"component": step.component, "version": step.number})
    finally:
        await conn.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK,))
    log.info(migrations_line(steps), extra={"database": where})
