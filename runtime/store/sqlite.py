"""The one durable store: SQLite through aiosqlite, WAL mode, one writer at a time.

Everything the runtime persists goes through `Store.write()`, a transaction whose
events are committed with the records they describe and published only after commit.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiosqlite

from runtime.clock import Clock, SystemClock
from runtime.events import EPHEMERAL, Event, EventFeed, EventType
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
from runtime.store.writer import Writer, dumps
from runtime.transcript import BLOCKS, Transcript, TranscriptMessage

log = logging.getLogger(__name__)


class Store:
    """Narrow persistence interface; a PostgreSQL twin would implement the same methods."""

    def __init__(self, conn: aiosqlite.Connection, path: Path, clock: Clock) -> None:
        self._conn = conn
        self.path = path
        self.clock = clock
        self._write_lock = asyncio.Lock()
        self._next_event_seq = 1
        self.feed = EventFeed(self.events_after)

    @classmethod
    async def open(cls, path: str | Path, *, clock: Clock | None = None) -> Store:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = await aiosqlite.connect(path, isolation_level=None)
        conn.row_factory = aiosqlite.Row
        await conn.execute("PRAGMA journal_mode=WAL")
        await conn.execute("PRAGMA synchronous=NORMAL")
        await conn.execute("PRAGMA foreign_keys=ON")
        await conn.execute("PRAGMA busy_timeout=5000")
        store = cls(conn, path, clock or SystemClock())
        await store._migrate()
        async with conn.execute("SELECT COALESCE(MAX(seq), 0) FROM events") as cur:
            row = await cur.fetchone()
        store._next_event_seq = int(row[0]) + 1 if row else 1
        return store

    async def _migrate(self) -> None:
        async with self._conn.execute("PRAGMA user_version") as cur:
            row = await cur.fetchone()
        version = int(row[0]) if row else 0
        for number, script in enumerate(MIGRATIONS[version:], start=version + 1):
            await self._conn.executescript(
                f"BEGIN;\n{script}\nPRAGMA user_version={number};\nCOMMIT;"
            )
            log.info("store migrated", extra={"schema_version": number, "path": str(self.path)})

    async def close(self) -> None:
        self.feed.close()
        await self._conn.close()

    @asynccontextmanager
    async def write(self) -> AsyncIterator[Writer]:
        """A write transaction; its events get ledger sequence numbers and publish on commit."""
        async with self._write_lock:
            writer = Writer(self._conn, self.clock)
            await self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield writer
                durable = [e for e in writer.events if e.type not in EPHEMERAL]
                for offset, event in enumerate(durable):
                    event.seq = self._next_event_seq + offset
                await self._conn.executemany(
                    "INSERT INTO events (seq, type, session_id, run_id, data, at)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    [(e.seq, e.type, e.session_id, e.run_id, dumps(e.data), e.at) for e in durable],
                )
                await self._conn.execute("COMMIT")
            except BaseException:
                for event in writer.events:
                    event.seq = None
                await self._conn.execute("ROLLBACK")
                raise
            self._next_event_seq += len(durable)
        self.feed.publish(writer.events)

    async def emit(self, *events: Event) -> None:
        async with self.write() as w:
            for event in events:
                w.emit(event)

    def publish_ephemeral(self, event: Event) -> None:
        event.at = event.at or self.clock.wall()
        self.feed.publish([event])

    # -- reads -------------------------------------------------------------------------

    async def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[aiosqlite.Row]:
        async with self._conn.execute(sql, params) as cur:
            return list(await cur.fetchall())

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
            transcript.rows.append(
                TranscriptMessage(role=r["role"], blocks=BLOCKS.validate_json(r["blocks"]))
            )
            transcript.message_ids.update(json.loads(r["source_message_ids"]))
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
                type=EventType(r["type"]),
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
