"""Reads of a session's history for people (`store.history`): its turns and its ledger
events, a page at a time, newest first. A page is found from a cursor (the turn or event
just beyond it), so it stays the same page as new turns and events come; each read is served
by an index (tests/runtime/test_query_plans.py), none reads a whole transcript."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from runtime.events import Event, EventType, Payload
from runtime.messages import QueueEntry
from runtime.records import RunRecord, ToolCallRecord
from runtime.store import rows
from runtime.store.database import Row
from runtime.store.filters import marks
from runtime.transcript import BLOCKS, TranscriptMessage

RUN_STARTED_AT = "SELECT started_at FROM runs WHERE id = ? AND session_id = ?"
# Newest first; `id` orders runs that started at the same moment.
RUNS_NEWEST = "SELECT * FROM runs WHERE session_id = ? ORDER BY started_at DESC, id DESC LIMIT ?"
RUNS_OLDER = (
    "SELECT * FROM runs WHERE session_id = ? AND started_at <= ?"
    " AND (started_at < ? OR id < ?) ORDER BY started_at DESC, id DESC LIMIT ?"
)
RUNS_NEWER = (
    "SELECT * FROM runs WHERE session_id = ? AND started_at >= ?"
    " AND (started_at > ? OR id > ?) ORDER BY started_at, id LIMIT ?"
)
# A session's ledger events but the per-step progress ones (shown live, not kept for people).
_EVENTS = f"SELECT * FROM events WHERE session_id = ? AND type != '{EventType.PROGRESS.value}'"
EVENTS_NEWEST = _EVENTS + " ORDER BY seq DESC LIMIT ?"
EVENTS_OLDER = _EVENTS + " AND seq < ? ORDER BY seq DESC LIMIT ?"
EVENTS_NEWER = _EVENTS + " AND seq > ? ORDER BY seq LIMIT ?"
# A session's newest finished turns, for the size of its context as last measured.
TURNS_FINISHED = (
    f"SELECT * FROM events WHERE session_id = ? AND type = '{EventType.TURN_FINISHED.value}'"
    " ORDER BY seq DESC LIMIT ?"
)


def messages_of_runs_sql(runs: int) -> str:
    """Unsorted: a page's few, sorted after reading."""
    return f"SELECT * FROM messages WHERE run_id IN ({marks(runs)})"


def agent_rows_of_runs_sql(runs: int) -> str:
    """Unsorted: a page's few, sorted after reading."""
    return (
        f"SELECT id, run_id, role, blocks FROM transcript WHERE run_id IN ({marks(runs)})"
        " AND role = 'assistant'"
    )


def tool_calls_of_runs_sql(runs: int) -> str:
    """Unsorted: a page's few, sorted after reading."""
    return f"SELECT * FROM tool_calls WHERE run_id IN ({marks(runs)})"


class History:
    def __init__(self, rows: Callable[[str, Sequence[Any]], Awaitable[list[Row]]]) -> None:
        self._rows = rows

    async def runs(
        self,
        session_id: str,
        *,
        older_than: str | None = None,
        newer_than: str | None = None,
        limit: int,
    ) -> list[RunRecord]:
        """Up to `limit` of the session's runs, newest first: its newest, or those nearest
        to the run `older_than` (before it) or `newer_than` (after it). A cursor that is not
        one of the session's runs gives none."""
        cursor = older_than or newer_than
        if cursor is None:
            found = await self._rows(RUNS_NEWEST, (session_id, limit))
            return [rows.run(r) for r in found]
        at = await self._rows(RUN_STARTED_AT, (cursor, session_id))
        if not at:
            return []
        started = at[0]["started_at"]
        sql = RUNS_OLDER if older_than else RUNS_NEWER
        found = await self._rows(sql, (session_id, started, started, cursor, limit))
        runs = [rows.run(r) for r in found]
        return runs if older_than else runs[::-1]

    async def messages_of_runs(self, run_ids: Sequence[str]) -> list[QueueEntry]:
        """The messages these runs took (the first, then any taken in while they ran)."""
        if not run_ids:
            return []
        found = await self._rows(messages_of_runs_sql(len(run_ids)), tuple(run_ids))
        return sorted((rows.entry(r) for r in found), key=lambda m: m.seq)

    async def agent_rows_of_runs(
        self, run_ids: Sequence[str]
    ) -> list[tuple[str, TranscriptMessage]]:
        """What the agent said in these runs, each model round one transcript row (its text
        and tool calls), in order: (run id, row)."""
        if not run_ids:
            return []
        found = await self._rows(agent_rows_of_runs_sql(len(run_ids)), tuple(run_ids))
        return [
            (
                r["run_id"],
                TranscriptMessage(role=r["role"], blocks=BLOCKS.validate_json(r["blocks"])),
            )
            for r in sorted(found, key=lambda r: int(r["id"]))
        ]

    async def tool_calls_of_runs(self, run_ids: Sequence[str]) -> list[ToolCallRecord]:
        """These runs' tool calls, in the order they started."""
        if not run_ids:
            return []
        found = await self._rows(tool_calls_of_runs_sql(len(run_ids)), tuple(run_ids))
        return sorted((rows.tool_call(r) for r in found), key=lambda c: (c.started_at, c.id))

    async def events(
        self,
        session_id: str,
        *,
        older_than: int | None = None,
        newer_than: int | None = None,
        limit: int,
    ) -> list[Event]:
        """Up to `limit` of the session's ledger events (not its progress ones), newest
        first: its newest, or those nearest to the sequence number `older_than` (below it)
        or `newer_than` (above it)."""
        if older_than is not None:
            found = await self._rows(EVENTS_OLDER, (session_id, older_than, limit))
        elif newer_than is not None:
            found = (await self._rows(EVENTS_NEWER, (session_id, newer_than, limit)))[::-1]
        else:
            found = await self._rows(EVENTS_NEWEST, (session_id, limit))
        return [_event(r) for r in found]

    async def last_context_tokens(self, session_id: str, *, turns: int = 5) -> int | None:
        """The size of the session's context as its last measured turn left it (a turn
        stopped before its first model call measured nothing): what the provider counted,
        kept in the ledger, so a restart does not forget it."""
        for r in await self._rows(TURNS_FINISHED, (session_id, turns)):
            tokens = getattr(_event(r).data, "context_tokens", None)
            if tokens is not None:
                return int(tokens)
        return None


def _event(r: Row) -> Event:
    return Event(
        Payload.decode(r["type"], r["data"]), r["session_id"], r["run_id"], r["at"], r["seq"]
    )
