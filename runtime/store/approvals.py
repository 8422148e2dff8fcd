"""Reads of operator approvals (`store.approvals`); they are written by `Writer`
(`insert_approval`, `decide_approval`) in the transaction that emits their events."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from runtime.records import ApprovalRecord, ApprovalStatus
from runtime.store.database import Row
from runtime.store.filters import marks

APPROVAL = "SELECT * FROM approvals WHERE id = ?"


def for_tool_uses_sql(ids: int) -> str:
    return f"SELECT * FROM approvals WHERE tool_use_id IN ({marks(ids)})"


def pending_sql(sessions: int) -> str:
    """Unsorted: a session has a few at most, sorted after reading."""
    return f"SELECT * FROM approvals WHERE status = 'pending' AND session_id IN ({marks(sessions)})"


def _record(r: Row) -> ApprovalRecord:
    return ApprovalRecord(
        id=r["id"],
        tool_use_id=r["tool_use_id"],
        session_id=r["session_id"],
        run_id=r["run_id"],
        agent_id=r["agent_id"],
        tool=r["tool"],
        input=json.loads(r["input"]),
        status=ApprovalStatus(r["status"]),
        created_at=r["created_at"],
        deadline=r["deadline"],
        decided_by=r["decided_by"],
        decided_at=r["decided_at"],
    )


class Approvals:
    def __init__(self, rows: Callable[[str, Sequence[Any]], Awaitable[list[Row]]]) -> None:
        self._rows = rows

    async def get(self, approval_id: str) -> ApprovalRecord | None:
        found = await self._rows(APPROVAL, (approval_id,))
        return _record(found[0]) if found else None

    async def for_tool_uses(self, tool_use_ids: Sequence[str]) -> dict[str, ApprovalRecord]:
        """The approvals asked for these tool calls, by tool_use id."""
        if not tool_use_ids:
            return {}
        found = await self._rows(for_tool_uses_sql(len(tool_use_ids)), tuple(tool_use_ids))
        return {r["tool_use_id"]: _record(r) for r in found}

    async def pending(self, session_ids: Sequence[str]) -> list[ApprovalRecord]:
        """The approvals still waiting for an answer in these sessions, oldest first."""
        if not session_ids:
            return []
        found = await self._rows(pending_sql(len(session_ids)), tuple(session_ids))
        return sorted((_record(r) for r in found), key=lambda a: a.created_at)
