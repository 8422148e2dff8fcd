"""Write transactions in order: each is written under one lock, handed to the database whole,
and once committed its ledger events are published in ledger order and its `after_commit`
callbacks run.

Where the process numbers ledger events itself (SQLite), they are numbered as the transaction
is sealed; where the database does (PostgreSQL: at the end of the commit, under the fleet's
write lock, `postgres.py`), they get their numbers once the commit returns, and until then the
publisher's follower carries no other replica's events past them (`Publisher.unnumbered`).

Where the database groups commits (`Database.grouped`: SQLite queues a transaction in order
the moment it is handed over), the lock is let go as soon as the transaction is sealed, so the
next one is written while this one commits, and the writer thread commits whatever has queued
together. Publishing still follows the ledger's order: each transaction waits for the one
sealed before it (committed and published, or failed) before it publishes. Elsewhere
(PostgreSQL: one write connection) the lock is held until the commit is over, so this
process's transactions commit, and are numbered, in the order they were sealed.

This runs once per durable write (every submitted message, every round of a turn), so the
usual path creates no task: the caller awaits the commit, and what follows it runs in the
caller's task when nothing in it can wait (else in a task of its own, which a cancelled caller
cannot cut short).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from config.secret_scan import SecretScan
from config.secrets import Secrets
from runtime.clock import Clock
from runtime.events import Event
from runtime.records import Lease
from runtime.store.database import Database, Sequences, Statement
from runtime.store.fencing import FENCE
from runtime.store.publishing import Publisher
from runtime.store.writer import Writer

log = logging.getLogger(__name__)

INSERT_EVENT = (
    "INSERT INTO events (seq, type, session_id, run_id, data, at) VALUES (?, ?, ?, ?, ?, ?)"
)


@dataclass(slots=True)
class _Sealed:
    """A transaction handed to the database, and what happens once it is committed."""

    writer: Writer
    durable: list[Event]  # its ledger events (the rest are ephemeral)
    commit: asyncio.Future[int | None]  # the first event's number, where the database numbers
    first: int | None  # its oldest ledger event (None: it wrote none, or not numbered yet)
    last: int | None  # its newest ledger event (None: it wrote none, or not numbered yet)
    before: Sequences  # the numbers before it, taken back if it fails and nothing came after
    after: Sequences
    ahead: asyncio.Future[None] | None  # done once the one sealed before it is through
    through: asyncio.Future[None]  # done once it is through (published, or failed)


class Transactions:
    def __init__(self, db: Database, clock: Clock, publisher: Publisher, secrets: Secrets) -> None:
        self.db = db
        self.clock = clock
        self.secrets = secrets
        self.scan = SecretScan(secrets)
        self.lock = asyncio.Lock()
        self.seq = Sequences()  # the next numbers to give out
        self.committed = 0  # the newest ledger event committed, as far as this process knows
        self.fence: Lease | None = None
        self._publisher = publisher
        self._last: asyncio.Future[None] | None = None  # the newest sealed one's `through`

    def write(self) -> _Transaction:
        """One write transaction. Once its commit has started it runs to the end even if the
        caller is cancelled, so a cancelled caller never mistakes a committed write for a
        failed one."""
        return _Transaction(self)

    def seal(self, writer: Writer, before: Sequences) -> _Sealed:
        """Number its durable events (unless the database does), and hand it over."""
        durable = [e for e in writer.events if not e.data.EPHEMERAL]
        statements = writer.statements
        rows: list[Sequence[Any]] = []
        first = last = None
        if self.db.numbers_events:
            rows = [(e.type, e.session_id, e.run_id, writer.data_json(e), e.at) for e in durable]
            if durable:
                self._publisher.numbering()
        else:
            for event in durable:
                event.seq = self.seq.event
                self.seq.event += 1
            params: list[Sequence[Any]] = [
                (e.seq, e.type, e.session_id, e.run_id, writer.data_json(e), e.at) for e in durable
            ]
            statements = [*statements, Statement(INSERT_EVENT, params, many=True)]
            first = durable[0].seq if durable else None
            last = durable[-1].seq if durable else None
            if first is not None:
                self._publisher.own.add(first)  # a carry stops before it until it is published
        hint = any(e.data.HINT for e in durable)
        commit = asyncio.ensure_future(self.db.commit(statements, rows, hint))
        ahead, self._last = self._last, asyncio.get_running_loop().create_future()
        return _Sealed(
            writer, durable, commit, first, last, before, _copy(self.seq), ahead, self._last
        )

    async def finish(self, t: _Sealed) -> None:
        """Wait for the commit, then what follows it (`_after`)."""
        if not t.commit.done():
            try:
                # A grouped database's commit does not give way to a cancelled caller (the
                # caller wakes once it is over); elsewhere it is shielded from one.
                await (t.commit if self.db.grouped else asyncio.shield(t.commit))
            except asyncio.CancelledError:  # the caller is cancelled; the commit goes on
                rest = asyncio.ensure_future(self._after(t))
                with suppress(Exception):
                    await rest
                raise
            except Exception:
                pass  # `_after` raises it
        ahead_done = t.ahead is None or t.ahead.done()
        if ahead_done and self._publisher.at_once(t.writer.events):
            await self._after(t)  # nothing in it waits, so nothing can cut it short
        else:
            await asyncio.shield(asyncio.ensure_future(self._after(t)))

    async def _after(self, t: _Sealed) -> None:
        """Once the commit is over: after the transaction sealed before it, publish the events
        and run the callbacks. If it failed, take its numbers back unless a later transaction
        has taken some (then they stay unused: a gap, never a number twice)."""
        failure: BaseException | None = None
        numbering = self.db.numbers_events and bool(t.durable)
        try:
            try:
                first = await t.commit
            except BaseException as exc:
                failure = exc
                if numbering:
                    self._publisher.numbered(None)
                for event in t.writer.events:
                    event.seq = None
                # Taken back when this process counts them (a block reserved for the
                # transaction, PostgreSQL, is never given again) and none came after; in place:
                # a transaction being written shares it.
                if t.after.end is None and self.seq == t.after:
                    self.seq.message = t.before.message
                    self.seq.event = t.before.event
                    self.seq.transcript = t.before.transcript
            else:
                if numbering:
                    assert first is not None
                    for offset, event in enumerate(t.durable):
                        event.seq = first + offset
                    t.first, t.last = first, first + len(t.durable) - 1
                    self._publisher.numbered(first)
                if t.last is not None:
                    self.committed = max(self.committed, t.last)
            if t.ahead is not None and not t.ahead.done():
                await t.ahead
            if failure is None:
                await self._publisher.publish(t.writer.events)
        finally:
            if t.first is not None:
                self._publisher.own.discard(t.first)
            t.through.set_result(None)
        if failure is not None:
            raise failure
        _run_callbacks(t.writer.on_commit)


class _Transaction:
    """`async with store.write() as w:` (a class rather than a generator: it is on every
    durable write's path)."""

    __slots__ = ("_before", "_locked", "_tx", "_writer")

    def __init__(self, tx: Transactions) -> None:
        self._tx = tx
        self._locked = False

    async def __aenter__(self) -> Writer:
        tx = self._tx
        await tx.lock.acquire()
        self._locked = True
        try:
            self._before = _copy(tx.seq)
            block = await tx.db.begin()
            if block is not None:
                tx.seq = block
            self._writer = Writer(tx.clock, tx.seq, tx.secrets, tx.scan)
            for lease in (tx.fence, *FENCE.get()):  # the store's, and this task's
                if lease is not None:
                    self._writer.fenced(lease)
        except BaseException:
            self._release()
            raise
        return self._writer

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        tx = self._tx
        try:
            sealed: _Sealed | None = None
            try:
                if exc_type is None:
                    sealed = tx.seal(self._writer, self._before)
            finally:
                if sealed is None:
                    tx.seq = self._before
                    for event in self._writer.events:
                        event.seq = None
                    await asyncio.shield(tx.db.rollback())
            if sealed is None:
                return  # the body's exception goes on
            if tx.db.grouped:
                self._release()
            await tx.finish(sealed)
        finally:
            self._release()

    def _release(self) -> None:
        if self._locked:
            self._locked = False
            self._tx.lock.release()


def _copy(seq: Sequences) -> Sequences:
    return Sequences(seq.message, seq.event, seq.transcript, seq.end)


def _run_callbacks(callbacks: list[Callable[[], None]]) -> None:
    for callback in callbacks:
        try:
            callback()
        except Exception:  # the transaction is committed: one failing listener must not undo
            log.exception("after-commit callback failed")
