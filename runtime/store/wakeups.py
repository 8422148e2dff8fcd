"""Wake-ups an agent scheduled (`store.wakeups` reads them); written in the transaction of
what they change: asked for with the tool's call, fired with the message they become,
cancelled with the audit event that says who cancelled them."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from runtime.records import WakeupRecord, WakeupStatus
from runtime.store.database import Row
from runtime.store.writer import Writer, dumps

PENDING = "SELECT * FROM wakeups WHERE status = 'pending' ORDER BY due_at, id"
PENDING_OF = "SELECT * FROM wakeups WHERE session_id = ? AND status = 'pending' ORDER BY due_at"
ONE = "SELECT * FROM wakeups WHERE id = ?"
# When the newest `limit` wake-ups a session asked for since a time were asked for.
ASKED_SINCE = (
    "SELECT created_at FROM wakeups WHERE session_id = ? AND created_at > ?"
    " ORDER BY created_at DESC LIMIT ?"
)


def _record(r: Row) -> WakeupRecord:
    return WakeupRecord(
        id=r["id"],
        session_id=r["session_id"],
        run_id=r["run_id"],
        due_at=r["due_at"],
        note=r["note"],
        status=WakeupStatus(r["status"]),
        created_at=r["created_at"],
        reply_route=json.loads(r["reply_route"]) if r["reply_route"] else None,
        message_id=r["message_id"],
    )


class Wakeups:
    def __init__(self, rows: Callable[[str, Sequence[Any]], Awaitable[list[Row]]]) -> None:
        self._rows = rows

    async def pending(self) -> list[WakeupRecord]:
        return [_record(r) for r in await self._rows(PENDING, ())]

    async def get(self, wakeup_id: str) -> WakeupRecord | None:
        found = await self._rows(ONE, (wakeup_id,))
        return _record(found[0]) if found else None

    async def pending_of(self, session_id: str) -> list[WakeupRecord]:
        return [_record(r) for r in await self._rows(PENDING_OF, (session_id,))]

    async def asked_since(self, session_id: str, since: float, limit: int) -> list[float]:
        """When the session asked for its wake-ups after `since` (any status: a replaced or
        cancelled one counts), newest first, at most `limit`."""
        rows = await self._rows(ASKED_SINCE, (session_id, since, limit))
        return [r["created_at"] for r in rows]


def insert(w: Writer, wakeup: WakeupRecord) -> None:
    w.write_sql(
        "INSERT INTO wakeups (id, session_id, run_id, due_at, note, status, created_at,"
        " reply_route) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            wakeup.id,
            wakeup.session_id,
            wakeup.run_id,
            wakeup.due_at,
            w.mask(wakeup.note),
            wakeup.status,
            wakeup.created_at,
            dumps(wakeup.reply_route) if wakeup.reply_route is not None else None,
        ),
    )


def fired(w: Writer, wakeup_id: str, message_id: str) -> None:
    w.write_sql(
        "UPDATE wakeups SET status = 'fired', message_id = ? WHERE id = ? AND status = 'pending'",
        (message_id, wakeup_id),
        expect=1,  # cancelled meanwhile (on another replica): it fires not
    )


def cancelled(w: Writer, wakeup_id: str, by: str) -> None:
    w.write_sql(
        "UPDATE wakeups SET status = 'cancelled', decided_by = ?"
        " WHERE id = ? AND status = 'pending'",
        (by, wakeup_id),
    )
