"""The one durable store: SQLite (one process) or PostgreSQL (replicas), behind one API.

Writes go through `Store.write()`: a buffered transaction run in one step by the database,
with the events it produced, published only after it commits. Reads are named, typed
operations. Every SQL statement of the runtime is in this package; a layer above reads its
own tables through its own store module, which alone calls `read_sql`.

Where replicas share the database, the ledger events they commit reach this process's feed
too, in ledger order (`publishing.py`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

from config.secrets import Secrets
from runtime.clock import Clock, SystemClock
from runtime.events import Event, EventFeed, Payload
from runtime.messages import QueueEntry, QueueStatus
from runtime.records import (
    Lease,
    NotificationRecord,
    RunRecord,
    RunStatus,
    SessionRecord,
    ToolCallRecord,
)
from runtime.store import hot_reads, rows
from runtime.store.approvals import Approvals
from runtime.store.database import (
    Database,
    Engine,
    Migration,
    Row,
    Sequences,
)
from runtime.store.engines import open_database
from runtime.store.filters import Where, marks
from runtime.store.history import History
from runtime.store.leases import Leases
from runtime.store.memory import MemoryRows
from runtime.store.publishing import Publisher
from runtime.store.retention import BATCH, PRUNE_EVENTS, in_batches
from runtime.store.schema import MIGRATIONS
from runtime.store.transactions import Transactions
from runtime.store.usage import UsageLedger
from runtime.store.wakeups import Wakeups
from runtime.store.writer import Writer
from runtime.transcript import BLOCKS, Transcript, TranscriptMessage

log = logging.getLogger(__name__)


class Store:
    """The runtime's persistence, on whichever `Database` the config names."""

    def __init__(self, db: Database, clock: Clock, secrets: Secrets | None = None) -> None:
        self.db = db
        self.clock = clock
        # Masked in the ledger's events and in what a layer above writes for people to read.
        self.secrets = secrets if secrets is not None else Secrets()
        # runtime/store/leases.py
        self.leases = Leases(self.write, self._rows, db.alone, clock, db.engine)
        self.approvals = Approvals(self._rows)  # runtime/store/approvals.py
        self.history = History(self._rows)  # runtime/store/history.py: pages for people
        self.wakeups = Wakeups(self._rows)  # runtime/store/wakeups.py
        self.usage = UsageLedger(self._rows)  # runtime/store/usage.py: what calls cost
        # runtime/store/memory.py
        self.memories = MemoryRows(self._rows, db.engine, shared=db.shared)
        self.feed = EventFeed(self.events_after)
        self._publisher = Publisher(self.feed, self.events_after)
        self._tx = Transactions(db, clock, self._publisher, self.secrets)

    @property
    def engine(self) -> Engine:
        return self.db.engine

    @property
    def described(self) -> str:
        return self.db.described

    @classmethod
    async def open(
        cls,
        location: str | Path,
        *,
        clock: Clock | None = None,
        extra_migrations: Mapping[str, Sequence[str | Migration]] | None = None,
        exclusive: bool = True,
        secrets: Secrets | None = None,
    ) -> Store:
        """Open (creating and migrating) the database: a file path (SQLite) or a
        `postgresql://` URL. Layers above the runtime bring their own tables as
        `extra_migrations`, each versioned on its own.

        `exclusive` (the default; SQLite only) makes this process the file's only runner: a
        second one would take the first one's running turns for crashed ones. Readers that
        only report (`switchboard status`) pass False. PostgreSQL is shared by design.
        `secrets`: what the store masks (see `Writer`); none by default."""
        migrations = {"runtime": MIGRATIONS, **(extra_migrations or {})}
        db = await open_database(location, migrations, exclusive=exclusive)
        store = cls(db, clock or SystemClock(), secrets)
        # Where the numbers stand: this process numbers on from them where it is the only
        # writer; where replicas share the database, each transaction numbers its rows from a
        # block `begin` reserves and the database numbers the events (`postgres.py`), and only
        # the newest event counts here (the feed's start).
        [row] = await store._rows(hot_reads.SEQUENCES)
        store._tx.seq = Sequences(int(row["message"]), int(row["event"]), int(row["transcript"]))
        store._publisher.published = store._tx.committed = store._tx.seq.event - 1
        notices = db.notifications()
        if notices is not None:
            store._publisher.follow(notices)
        return store

    async def close(self) -> None:
        await self._publisher.close()
        self.feed.close()
        await self.db.close()

    def write(self) -> AbstractAsyncContextManager[Writer]:
        """A write transaction (`transactions.py`); its events get ledger sequence numbers
        and publish on commit, in ledger order, then its `after_commit` callbacks run. A
        uniqueness conflict raises `StoreConflictError` and nothing of it is kept."""
        return self._tx.write()

    @property
    def last_seq(self) -> int:
        """The sequence number of the newest committed ledger event this process knows of
        (0 when empty)."""
        return max(self._tx.committed, self._publisher.published)

    async def emit(self, *events: Event) -> None:
        async with self.write() as w:
            for event in events:
                w.emit(event)

    def publish_ephemeral(self, event: Event) -> None:
        event.at = event.at or self.clock.wall()
        self.feed.publish([event])

    # -- reads -------------------------------------------------------------------------

    async def read_sql(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        """A read of a layer's own store module (bridge/store/), on the read-only
        connection."""
        return await self._rows(sql, params)

    async def point_sql(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        """A read of a layer's own store module that an index answers with a few rows, run
        for every turn, message or delivery (`Database.point`)."""
        return await self.db.point(sql, params)

    async def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        return await self.db.rows(sql, params)

    async def sessions(self) -> list[SessionRecord]:
        found = await self._rows("SELECT * FROM sessions ORDER BY created_at, id")
        return [rows.session(r) for r in found]

    async def session(self, session_id: str) -> SessionRecord | None:
        found = await self._rows("SELECT * FROM sessions WHERE id = ?", (session_id,))
        return rows.session(found[0]) if found else None

    async def messages(
        self, *, session_id: str | None = None, statuses: Sequence[QueueStatus] | None = None
    ) -> list[QueueEntry]:
        where = Where().equal("session_id", session_id).among("status", statuses)
        sql = where.select("SELECT * FROM messages", order_by="seq")
        return [rows.entry(r) for r in await self._rows(sql, where.params)]

    async def messages_by_id(self, ids: Sequence[str]) -> list[QueueEntry]:
        if not ids:
            return []
        found = await self._rows(f"SELECT * FROM messages WHERE id IN ({marks(len(ids))})", ids)
        return [rows.entry(r) for r in found]

    async def first_message_of_run(self, run_id: str) -> QueueEntry | None:
        """The first message a run took: the one whose sender its answer goes back to."""
        found = await self.db.point(hot_reads.FIRST_MESSAGE_OF_RUN, (run_id,))
        return rows.entry(found[0]) if found else None

    async def messages_of_run(self, run_id: str) -> list[QueueEntry]:
        """The messages a run took, in their order."""
        return [rows.entry(r) for r in await self._rows(hot_reads.MESSAGES_OF_RUN, (run_id,))]

    async def transcript(self, session_id: str, known: Transcript | None = None) -> Transcript:
        """What the model sees of the session: its latest compaction's summary, then the rows
        after those it covers (so this read stays as small as the context window).

        `known`: what an earlier read of this session returned, unchanged since. Rows are
        only ever added, in the order of their ids, so only the rows after its last are read
        and parsed: a turn's read costs what is new, not the whole history."""
        last = await self.db.point(hot_reads.LATEST_COMPACTION, (session_id,))
        through = int(last[0]["through_row"]) if last else 0
        summary = last[0]["summary"] if last else None
        transcript = Transcript(summary=summary)
        after = through
        if known is not None:
            transcript = known.after(through, summary)
            after = max(through, known.row_ids[-1] if known.row_ids else 0)
        found = await self.db.point(hot_reads.TRANSCRIPT_AFTER, (session_id, after))
        wanted: list[str] = []
        for r in found:
            row = TranscriptMessage(role=r["role"], blocks=BLOCKS.validate_json(r["blocks"]))
            transcript.append(row, int(r["id"]), json.loads(r["source_message_ids"]))
            wanted.extend(a.id for a in row.attachments())
        transcript.files.update(await self.files(wanted))
        return transcript

    async def files(self, ids: Sequence[str]) -> dict[str, bytes]:
        """The bytes of these attachments, by id (a file never stored is absent)."""
        if not ids:
            return {}
        found = await self._rows(
            f"SELECT id, data FROM attachments WHERE id IN ({marks(len(ids))})", ids
        )
        return {r["id"]: bytes(r["data"]) for r in found}

    async def full_transcript(self, session_id: str) -> list[TranscriptMessage]:
        """Every row the session ever had, compacted or not: the audit, not for a request."""
        found = await self._rows(
            "SELECT role, blocks FROM transcript WHERE session_id = ? ORDER BY id", (session_id,)
        )
        return [
            TranscriptMessage(role=r["role"], blocks=BLOCKS.validate_json(r["blocks"]))
            for r in found
        ]

    async def runs(
        self, *, session_id: str | None = None, status: RunStatus | None = None
    ) -> list[RunRecord]:
        where = Where().equal("session_id", session_id).equal("status", status)
        sql = where.select("SELECT * FROM runs", order_by="started_at")
        return [rows.run(r) for r in await self._rows(sql, where.params)]

    async def run(self, run_id: str) -> RunRecord | None:
        found = await self.db.point(hot_reads.RUN, (run_id,))
        return rows.run(found[0]) if found else None

    async def last_row_of_run(self, run_id: str) -> int | None:
        """The id of the last transcript row a run appended, if it appended any."""
        found = await self.db.point(hot_reads.LAST_ROW_OF_RUN, (run_id,))
        return int(found[0]["id"]) if found else None

    async def latest_run(self, session_id: str) -> RunRecord | None:
        found = await self.db.point(hot_reads.LATEST_RUN, (session_id,))
        return rows.run(found[0]) if found else None

    async def tool_calls(
        self, *, run_id: str | None = None, ids: Sequence[str] | None = None
    ) -> list[ToolCallRecord]:
        """Tool calls of one run, or these calls (by tool_use id), or all."""
        if ids is not None:
            sql, params = f"SELECT * FROM tool_calls WHERE id IN ({marks(len(ids))})", tuple(ids)
        elif run_id is not None:
            sql, params = "SELECT * FROM tool_calls WHERE run_id = ?", (run_id,)
        else:
            sql, params = "SELECT * FROM tool_calls", ()
        found = await self._rows(sql + " ORDER BY started_at", params)
        return [rows.tool_call(r) for r in found]

    async def notifications(
        self, *, session_id: str | None = None, agent_id_prefix: str | None = None
    ) -> list[NotificationRecord]:
        """Notifications, oldest first: of one session, or of the agents whose ids start
        with `agent_id_prefix` (a workspace's: `"<workspace>/"`)."""
        where = Where().equal("session_id", session_id).starts_with("agent_id", agent_id_prefix)
        sql = where.select("SELECT * FROM notifications", order_by="created_at")
        return [rows.notification(r) for r in await self._rows(sql, where.params)]

    async def notification(self, notification_id: str) -> NotificationRecord | None:
        found = await self.db.point(hot_reads.NOTIFICATION, (notification_id,))
        return rows.notification(found[0]) if found else None

    async def events_after(self, seq: int, limit: int | None = None) -> list[Event]:
        if limit:
            found = await self._rows(hot_reads.EVENTS_AFTER_LIMIT, (seq, limit))
        else:
            found = await self._rows(hot_reads.EVENTS_AFTER, (seq,))
        return [_event(r) for r in found]

    def fence_with(self, lease: Lease | None) -> None:
        """Every write transaction from now on commits only while `lease` is still this
        holder's (`LeaseLostError` otherwise): the active replica's writes, so one that was
        paused past its lease's expiry cannot write over its successor's."""
        self._tx.fence = lease

    # -- retention ---------------------------------------------------------------------

    async def delete_sql(self, sql: str, params: Sequence[Any] = ()) -> int:
        """A bounded delete of a layer's own store module (bridge/store/), in a short write
        transaction of its own; returns how many rows it removed."""
        async with self._tx.lock:
            return await self.db.alone(sql, params)

    async def prune_events(self, before: float, through_seq: int, batch: int = BATCH) -> int:
        """Drop ledger events older than `before` (wall time) in batches, none after
        `through_seq`: the reader's cursor, so what it has not handled stays. The newest event
        always stays: the next open numbers on from it. Returns how many went."""
        bound = min(through_seq, self.last_seq - 1)
        return await in_batches(self.delete_sql, PRUNE_EVENTS, (bound, batch, before), batch)


def _event(r: Row) -> Event:
    return Event(
        Payload.decode(r["type"], r["data"]), r["session_id"], r["run_id"], r["at"], r["seq"]
    )
