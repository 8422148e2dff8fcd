"""The write side of the store: one transaction, buffered, committed in one step.

Writer methods only record statements; `Store.write()` runs them all, with the events they
produce, in a single trip to the database. Message and transcript numbers are given here, as
the body runs: from this process's own count (SQLite: the only writer), or from the block of
numbers reserved for the transaction (PostgreSQL, `postgres.py`). Ledger events are numbered
as the transaction is sealed (SQLite) or by the database at its commit (PostgreSQL).

A layer above keeps its tables in the same database and writes them in the same transaction
through its own store module (`bridge/store/`), which alone calls `write_sql`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from config.secret_scan import SecretScan
from config.secrets import Secrets
from runtime.clock import Clock
from runtime.events import Event
from runtime.messages import InboundMessage, QueueMode, QueueStatus
from runtime.records import (
    ApprovalRecord,
    ApprovalStatus,
    Lease,
    NotificationRecord,
    RunRecord,
    RunStatus,
    SessionRecord,
)
from runtime.store import leases
from runtime.store.database import Sequences, Statement
from runtime.tools.envelope import ToolResult
from runtime.transcript import BLOCKS, TranscriptMessage

_JSON = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


def dumps(value: Any) -> str:
    """Compact JSON (one encoder for all: `json.dumps` with options builds one per call)."""
    return _JSON.encode(value)


class Writer:
    """One open write transaction. Events emitted here commit with it, every secret in them
    masked: the ledger is the audit people read (the console, `switchboard status`), and the
    runtime -> bridge contract, so chat never gets a secret from it either. `scan` looks first
    (`config/secret_scan.py`): a text it says holds no secret is not searched by the mask."""

    def __init__(
        self, clock: Clock, sequences: Sequences, secrets: Secrets, scan: SecretScan
    ) -> None:
        self._clock = clock
        self._seq = sequences
        self._secrets = secrets
        self._scan = scan
        self.statements: list[Statement] = []
        self.events: list[Event] = []
        self.on_commit: list[Callable[[], None]] = []
        # An event's data as JSON, by the event's id(), where `emit` encoded it to look for
        # secrets and found none: its row is written with it, not encoded again.
        self._encoded: dict[int, str] = {}

    def emit(self, event: Event) -> Event:
        if not event.at:
            event.at = self._clock.wall()
        if self._secrets:
            encoded = event.data_json()
            if self._scan.maybe(encoded) and self._secrets.found_in(encoded):
                event.data = self._secrets.masked(event.data)
            else:
                self._encoded[id(event)] = encoded
        self.events.append(event)
        return event

    def data_json(self, event: Event) -> str:
        """The JSON of the data of `event` (one emitted here), as its row stores it."""
        return self._encoded.get(id(event)) or event.data_json()

    def mask(self, text: str) -> str:
        """`text` as a layer above stores what people read (an outgoing message, an admin's
        action): every secret masked."""
        return self._secrets.mask(text) if self._scan.maybe(text) else text

    def now(self) -> float:
        return self._clock.wall()

    def after_commit(self, callback: Callable[[], None]) -> None:
        """Call `callback` once this transaction has committed (never if it fails)."""
        self.on_commit.append(callback)

    def write_sql(
        self,
        sql: str,
        params: Sequence[Any] | list[Sequence[Any]] = (),
        *,
        many: bool = False,
        expect: int | None = None,
        ordered: bool = False,
    ) -> None:
        """A statement of a layer's own store module (bridge/store/), in this transaction.
        `expect`: the rows it must touch, else nothing of the transaction is kept
        (`ConditionFailedError`): a condition checked and applied in one step. `ordered`:
        the ids it gives are followed in order by a reader (`Statement.ordered`)."""
        self.statements.append(Statement(sql, params, many, expect, ordered=ordered))

    def _check_block(self, number: int) -> None:
        """A number past the transaction's reserved block could be another's: refused (the
        transaction fails; a block holds far more rows than any transaction writes)."""
        if self._seq.end is not None and number >= self._seq.end:
            raise RuntimeError(f"a write transaction numbered past its block: {number}")

    def _execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        self.statements.append(Statement(sql, params))

    def fenced(self, lease: Lease) -> None:
        """This transaction commits only while `lease` is still this holder's (its fence
        unchanged); else it fails with `LeaseLostError` and nothing of it is kept."""
        self.statements.append(leases.fenced(lease))

    def insert_session(self, s: SessionRecord) -> None:
        self._execute(
            "INSERT INTO sessions (id, agent_id, profile, parent_session_id, queue_mode,"
            " created_at, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                s.id,
                s.agent_id,
                s.profile,
                s.parent_session_id,
                s.queue_mode,
                s.created_at,
                dumps(s.metadata),
            ),
        )

    def set_queue_mode(self, session_id: str, mode: QueueMode | None) -> None:
        self._execute("UPDATE sessions SET queue_mode = ? WHERE id = ?", (mode, session_id))

    def insert_message(
        self, message_id: str, session_id: str, m: InboundMessage, status: QueueStatus
    ) -> int:
        """Store a message; returns its queue sequence number (its place in FIFO order)."""
        seq = self._seq.message
        self._seq.message += 1
        self._check_block(seq)
        now = self._clock.wall()
        self._execute(
            "INSERT INTO messages (seq, id, session_id, kind, origin, trust, authority_class,"
            " priority, text, delivery_surface, admission_context, provenance, status,"
            " created_at, updated_at, attachments, max_rounds)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                seq,
                message_id,
                session_id,
                m.kind,
                m.origin,
                m.trust,
                m.authority_class,
                m.priority,
                m.text,
                m.delivery_surface,
                m.admission_context,
                dumps(m.provenance.to_json()),
                status,
                now,
                now,
                dumps([a.model_dump(mode="json") for a in m.attachments]),
                m.max_rounds,
            ),
        )
        return seq

    def store_file(self, attachment_id: str, message_id: str, data: bytes) -> None:
        """The bytes of a file that came with a message (described on the message), or of a
        picture a tool returned (`message_id`: the tool call's id)."""
        self._execute(
            "INSERT INTO attachments (id, message_id, data, created_at) VALUES (?, ?, ?, ?)",
            (attachment_id, message_id, data, self._clock.wall()),
        )

    def set_message_status(
        self,
        ids: Iterable[str],
        status: QueueStatus,
        *,
        run_id: str | None = None,
        boundary: str | None = None,
    ) -> None:
        now = self._clock.wall()
        rows: list[Sequence[Any]] = [(status, now, run_id, boundary, i) for i in ids]
        self.statements.append(
            Statement(
                "UPDATE messages SET status = ?, updated_at = ?, run_id = COALESCE(?, run_id),"
                " boundary = COALESCE(?, boundary) WHERE id = ?",
                rows,
                many=True,
            )
        )

    def append_transcript(
        self,
        session_id: str,
        run_id: str | None,
        message: TranscriptMessage,
        source_message_ids: Sequence[str] = (),
    ) -> int:
        """Store a transcript row; returns its row id (its place in the session's order)."""
        row_id = self._seq.transcript
        self._seq.transcript += 1
        self._check_block(row_id)
        self._execute(
            "INSERT INTO transcript (id, session_id, run_id, role, blocks, source_message_ids)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (
                row_id,
                session_id,
                run_id,
                message.role,
                BLOCKS.dump_json(message.blocks).decode(),
                dumps(list(source_message_ids)),
            ),
        )
        return row_id

    def record_compaction(
        self,
        session_id: str,
        run_id: str | None,
        through_row: int,
        summary: str,
        *,
        fallback: bool,
    ) -> None:
        """From now on the model sees `summary` in place of the rows up to `through_row`."""
        self._execute(
            "INSERT INTO compactions (session_id, run_id, through_row, summary, fallback,"
            " created_at) VALUES (?, ?, ?, ?, ?, ?)",
            (session_id, run_id, through_row, summary, fallback, self._clock.wall()),
        )

    def insert_run(self, run: RunRecord) -> None:
        self._execute(
            "INSERT INTO runs (id, session_id, status, model, started_at, payer)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (run.id, run.session_id, run.status, run.model, run.started_at, run.payer),
        )

    def finish_run(
        self, run_id: str, status: RunStatus, final_text: str | None, error: str | None = None
    ) -> None:
        self._execute(
            "UPDATE runs SET status = ?, finished_at = ?, final_text = ?, error = ? WHERE id = ?",
            (status, self._clock.wall(), final_text, error, run_id),
        )

    def tool_started(
        self, call_id: str, session_id: str, run_id: str, name: str, tool_input: dict[str, Any]
    ) -> None:
        self._execute(
            "INSERT INTO tool_calls (id, session_id, run_id, name, input, status, started_at)"
            " VALUES (?, ?, ?, ?, ?, 'running', ?)",
            (call_id, session_id, run_id, name, dumps(tool_input), self._clock.wall()),
        )

    def tool_finished(self, call_id: str, result: ToolResult) -> None:
        self._execute(
            "UPDATE tool_calls SET status = ?, result = ?, finished_at = ? WHERE id = ?",
            (result.status, result.model_dump_json(), self._clock.wall(), call_id),
        )

    def insert_approval(self, a: ApprovalRecord) -> None:
        self._execute(
            "INSERT INTO approvals (id, tool_use_id, session_id, run_id, agent_id, tool, input,"
            " status, created_at, deadline) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                a.id,
                a.tool_use_id,
                a.session_id,
                a.run_id,
                a.agent_id,
                a.tool,
                dumps(a.input),
                a.status,
                a.created_at,
                a.deadline,
            ),
        )

    def decide_approval(self, approval_id: str, status: ApprovalStatus, by: str | None) -> None:
        """Answer a pending approval; one already answered (on another replica, meanwhile)
        keeps its answer, and this transaction fails (`ConditionFailedError`)."""
        self.statements.append(
            Statement(
                "UPDATE approvals SET status = ?, decided_by = ?, decided_at = ?"
                " WHERE id = ? AND status = 'pending'",
                (status, by, self._clock.wall(), approval_id),
                expect=1,
            )
        )

    def insert_notification(self, n: NotificationRecord) -> None:
        self._execute(
            "INSERT INTO notifications (notification_id, agent_id, requested_by_agent_id,"
            " session_id, requested_by_session_id, run_id, target_operator_boundary, message,"
            " summary, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                n.notification_id,
                n.agent_id,
                n.requested_by_agent_id,
                n.session_id,
                n.requested_by_session_id,
                n.run_id,
                n.target_operator_boundary,
                n.message,
                n.summary,
                n.created_at,
            ),
        )
