"""The one durable store: SQLite in WAL mode, one writer at a time.

Writes go through `Store.write()`: a buffered transaction run in one step on the writer
thread's own connection, with the events it produced, published only after it commits.
Reads go through aiosqlite on a second, read-only connection (WAL lets them run beside
the writer).
"""

from __future__ import annotations

import asyncio
import dataclasses
import fcntl
import json
import logging
import sqlite3
from collections.abc import AsyncIterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from pathlib import Path
from typing import IO, Any

import aiosqlite

from runtime.clock import Clock, SystemClock
from runtime.errors import StoreBusyError
from runtime.events import EPHEMERAL, Event, EventFeed, event_type
from runtime.messages import (
    InboundMessage,
    MessageKind,
    Origin,
    Priority,
    Provenance,
    QueueEntry,
    QueueMode,
    QueueStatus,
    Trust,
)
from runtime.records import (
    AgentProfile,
    NotificationRecord,
    OperatorBoundary,
    RunRecord,
    RunStatus,
    SessionRecord,
)
from runtime.store.schema import MIGRATIONS
from runtime.store.writer import Sequences, Statement, Writer, dumps
from runtime.transcript import BLOCKS, Transcript, TranscriptMessage

log = logging.getLogger(__name__)

PRAGMAS = ("PRAGMA synchronous=NORMAL", "PRAGMA foreign_keys=ON", "PRAGMA busy_timeout=5000")
INSERT_EVENT = (
    "INSERT INTO events (seq, type, session_id, run_id, data, at) VALUES (?, ?, ?, ?, ?, ?)"
)


def _open_writer(path: Path, migrations: Mapping[str, Sequence[str]]) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    for pragma in PRAGMAS:
        conn.execute(pragma)
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_versions (component TEXT PRIMARY KEY,"
        " version INTEGER NOT NULL)"
    )
    for component, scripts in migrations.items():
        row = conn.execute(
            "SELECT version FROM schema_versions WHERE component = ?", (component,)
        ).fetchone()
        version = row[0] if row else 0
        if version > len(scripts):
            raise RuntimeError(
                f"{path}: the {component} schema is version {version}, newer than this "
                f"Switchboard knows ({len(scripts)}); upgrade Switchboard"
            )
        for number, script in enumerate(scripts[version:], start=version + 1):
            conn.executescript(
                f"BEGIN;\n{script}\nINSERT INTO schema_versions VALUES ('{component}', {number})"
                f" ON CONFLICT (component) DO UPDATE SET version = {number};\nCOMMIT;"
            )
            log.info("store migrated", extra={"component": component, "version": number})
    return conn


def _commit(conn: sqlite3.Connection, statements: list[Statement]) -> None:
    conn.execute("BEGIN IMMEDIATE")
    try:
        for sql, params, many in statements:
            if many:
                conn.executemany(sql, params)
            else:
                conn.execute(sql, params)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def _lock(path: Path) -> IO[bytes]:
    handle = open(f"{path}.lock", "ab")  # noqa: SIM115 - held open until close()
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise StoreBusyError(
            f"{path} is in use by another Switchboard process; stop it first (one process "
            "runs a database)"
        ) from None
    return handle


async def _finished_ok(commit: asyncio.Future[None]) -> bool:
    try:
        await commit
    except Exception:
        return False
    return True


class Store:
    """Narrow persistence interface; a PostgreSQL twin would implement the same methods."""

    def __init__(
        self,
        reader: aiosqlite.Connection,
        writer: sqlite3.Connection,
        executor: ThreadPoolExecutor,
        path: Path,
        clock: Clock,
    ) -> None:
        self._conn = reader
        self._writer = writer
        self._executor = executor
        self.path = path
        self.clock = clock
        self._write_lock = asyncio.Lock()
        self._seq = Sequences()
        self._lock: IO[bytes] | None = None
        self.feed = EventFeed(self.events_after)

    @classmethod
    async def open(
        cls,
        path: str | Path,
        *,
        clock: Clock | None = None,
        extra_migrations: Mapping[str, Sequence[str]] | None = None,
        exclusive: bool = True,
    ) -> Store:
        """Open (creating and migrating) the database. Layers above the runtime bring their
        own tables as `extra_migrations`, each versioned on its own.

        `exclusive` (the default) makes this process the database's only runner: a second
        one would take the first one's running turns for crashed ones. Readers that only
        report (`switchboard status`) pass False."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        lock = _lock(path) if exclusive else None
        migrations = {"runtime": MIGRATIONS, **(extra_migrations or {})}
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="switchboard-store")
        writer = await asyncio.get_running_loop().run_in_executor(
            executor, _open_writer, path, migrations
        )
        reader = await aiosqlite.connect(path, isolation_level=None)
        reader.row_factory = aiosqlite.Row
        for pragma in (*PRAGMAS, "PRAGMA query_only=ON"):
            await reader.execute(pragma)
        store = cls(reader, writer, executor, path, clock or SystemClock())
        store._lock = lock
        for table, field in (("events", "event"), ("messages", "message")):
            async with reader.execute(f"SELECT COALESCE(MAX(seq), 0) FROM {table}") as cur:
                row = await cur.fetchone()
            setattr(store._seq, field, int(row[0]) + 1 if row else 1)
        return store

    async def close(self) -> None:
        self.feed.close()
        await self._conn.close()
        await asyncio.get_running_loop().run_in_executor(self._executor, self._writer.close)
        self._executor.shutdown(wait=True)
        if self._lock is not None:
            self._lock.close()

    @asynccontextmanager
    async def write(self) -> AsyncIterator[Writer]:
        """A write transaction; its events get ledger sequence numbers and publish on commit.

        Once the commit has started it runs to the end even if the caller is cancelled, so a
        cancelled caller never mistakes a committed write for a failed one.
        """
        async with self._write_lock:
            before = dataclasses.replace(self._seq)
            writer = Writer(self.clock, self._seq)
            committed = False
            try:
                yield writer
                commit = asyncio.get_running_loop().run_in_executor(
                    self._executor, _commit, self._writer, self._seal(writer)
                )
                try:
                    await asyncio.shield(commit)
                except asyncio.CancelledError:
                    committed = await _finished_ok(commit)
                    raise
                committed = True
            finally:
                if committed:
                    self.feed.publish(writer.events)
                else:
                    self._seq.message, self._seq.event = before.message, before.event
                    for event in writer.events:
                        event.seq = None

    def _seal(self, writer: Writer) -> list[Statement]:
        """The transaction's statements, its durable events numbered and appended."""
        durable = [e for e in writer.events if e.type not in EPHEMERAL]
        for event in durable:
            event.seq = self._seq.event
            self._seq.event += 1
        rows: list[Sequence[Any]] = [
            (e.seq, e.type, e.session_id, e.run_id, dumps(e.data), e.at) for e in durable
        ]
        return [*writer.statements, (INSERT_EVENT, rows, True)]

    @property
    def last_seq(self) -> int:
        """The sequence number of the newest committed ledger event (0 when empty)."""
        return self._seq.event - 1

    async def emit(self, *events: Event) -> None:
        async with self.write() as w:
            for event in events:
                w.emit(event)

    def publish_ephemeral(self, event: Event) -> None:
        event.at = event.at or self.clock.wall()
        self.feed.publish([event])

    # -- reads -------------------------------------------------------------------------

    async def fetch_all(self, sql: str, params: Sequence[Any] = ()) -> list[aiosqlite.Row]:
        """A read for the layers above, on the read-only connection."""
        return await self._rows(sql, params)

    async def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[aiosqlite.Row]:
        # Executed and read to the end in one call on the connection's thread. A statement
        # left open between two awaits would hold the connection's read snapshot, and a read
        # by another task in that gap would not see writes committed since (an outbox worker
        # once found no intent that had just been written, and left it pending).
        return list(await self._conn.execute_fetchall(sql, params))

    async def sessions(self) -> list[SessionRecord]:
        rows = await self._rows("SELECT * FROM sessions ORDER BY created_at, id")
        return [
            SessionRecord(
                id=r["id"],
                agent_id=r["agent_id"],
                profile=AgentProfile(r["profile"]),
                created_at=r["created_at"],
                parent_session_id=r["parent_session_id"],
                queue_mode=QueueMode(r["queue_mode"]) if r["queue_mode"] else None,
                metadata=json.loads(r["metadata"]),
            )
            for r in rows
        ]

    async def messages(
        self, *, session_id: str | None = None, statuses: Sequence[QueueStatus] | None = None
    ) -> list[QueueEntry]:
        where: list[str] = []
        params: list[Any] = []
        if session_id is not None:
            where.append("session_id = ?")
            params.append(session_id)
        if statuses:
            where.append(f"status IN ({','.join('?' * len(statuses))})")
            params.extend(statuses)
        sql = "SELECT * FROM messages" + (f" WHERE {' AND '.join(where)}" if where else "")
        return [_entry(r) for r in await self._rows(sql + " ORDER BY seq", params)]

    async def transcript(self, session_id: str) -> Transcript:
        rows = await self._rows(
            "SELECT role, blocks, source_message_ids FROM transcript WHERE session_id = ?"
            " ORDER BY id",
            (session_id,),
        )
        transcript = Transcript()
        for r in rows:
            transcript.append(
                TranscriptMessage(role=r["role"], blocks=BLOCKS.validate_json(r["blocks"])),
                json.loads(r["source_message_ids"]),
            )
        return transcript

    async def runs(
        self, *, session_id: str | None = None, status: RunStatus | None = None
    ) -> list[RunRecord]:
        where: list[str] = []
        params: list[Any] = []
        if session_id is not None:
            where.append("session_id = ?")
            params.append(session_id)
        if status is not None:
            where.append("status = ?")
            params.append(status)
        sql = "SELECT * FROM runs" + (f" WHERE {' AND '.join(where)}" if where else "")
        return [
            RunRecord(
                id=r["id"],
                session_id=r["session_id"],
                status=RunStatus(r["status"]),
                model=r["model"],
                started_at=r["started_at"],
                finished_at=r["finished_at"],
                final_text=r["final_text"],
                error=r["error"],
            )
            for r in await self._rows(sql + " ORDER BY started_at", params)
        ]

    async def run(self, run_id: str) -> RunRecord | None:
        found = [r for r in await self.runs() if r.id == run_id] if run_id else []
        return found[0] if found else None

    async def tool_calls(self, *, run_id: str | None = None) -> list[dict[str, Any]]:
        sql = "SELECT * FROM tool_calls" + (" WHERE run_id = ?" if run_id else "")
        rows = await self._rows(sql + " ORDER BY started_at", (run_id,) if run_id else ())
        return [
            {
                **dict(r),
                "input": json.loads(r["input"]),
                "result": json.loads(r["result"]) if r["result"] else None,
            }
            for r in rows
        ]

    async def notifications(self, *, session_id: str | None = None) -> list[NotificationRecord]:
        sql = "SELECT * FROM notifications" + (" WHERE session_id = ?" if session_id else "")
        rows = await self._rows(sql + " ORDER BY created_at", (session_id,) if session_id else ())
        return [
            NotificationRecord(
                **{k: r[k] for k in r.keys() if k != "target_operator_boundary"},  # noqa: SIM118
                target_operator_boundary=OperatorBoundary(r["target_operator_boundary"]),
            )
            for r in rows
        ]

    async def events_after(self, seq: int, limit: int | None = None) -> list[Event]:
        sql = "SELECT * FROM events WHERE seq > ? ORDER BY seq" + (" LIMIT ?" if limit else "")
        rows = await self._rows(sql, (seq, limit) if limit else (seq,))
        return [
            Event(
                type=event_type(r["type"]),
                session_id=r["session_id"],
                run_id=r["run_id"],
                data=json.loads(r["data"]),
                at=r["at"],
                seq=r["seq"],
            )
            for r in rows
        ]


def _entry(r: aiosqlite.Row) -> QueueEntry:
    message = InboundMessage(
        text=r["text"],
        kind=MessageKind(r["kind"]),
        origin=Origin(r["origin"]),
        trust=Trust(r["trust"]),
        priority=Priority(r["priority"]),
        delivery_surface=r["delivery_surface"],
        admission_context=r["admission_context"],
        provenance=Provenance.from_json(json.loads(r["provenance"])),
    )
    return QueueEntry(
        id=r["id"],
        session_id=r["session_id"],
        seq=r["seq"],
        message=message,
        status=QueueStatus(r["status"]),
        created_at=r["created_at"],
        run_id=r["run_id"],
        boundary=r["boundary"],
    )
