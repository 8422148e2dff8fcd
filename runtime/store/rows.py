"""Stored rows back to the runtime's records."""

from __future__ import annotations

import json
from typing import Any

from pydantic import TypeAdapter

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
    ToolCallRecord,
)
from runtime.tools.envelope import ToolResult
from runtime.transcript import AttachmentBlock

ATTACHMENTS = TypeAdapter(list[AttachmentBlock])

Row = Any  # a sqlite3-style row: items by column name


def session(r: Row) -> SessionRecord:
    return SessionRecord(
        id=r["id"],
        agent_id=r["agent_id"],
        profile=AgentProfile(r["profile"]),
        created_at=r["created_at"],
        parent_session_id=r["parent_session_id"],
        queue_mode=QueueMode(r["queue_mode"]) if r["queue_mode"] else None,
        metadata=json.loads(r["metadata"]),
    )


def entry(r: Row) -> QueueEntry:
    message = InboundMessage(
        text=r["text"],
        kind=MessageKind(r["kind"]),
        origin=Origin(r["origin"]),
        trust=Trust(r["trust"]),
        priority=Priority(r["priority"]),
        delivery_surface=r["delivery_surface"],
        admission_context=r["admission_context"],
        provenance=Provenance.from_json(json.loads(r["provenance"])),
        attachments=tuple(ATTACHMENTS.validate_json(r["attachments"])),
        max_rounds=r["max_rounds"],
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


def run(r: Row) -> RunRecord:
    return RunRecord(
        id=r["id"],
        session_id=r["session_id"],
        status=RunStatus(r["status"]),
        model=r["model"],
        started_at=r["started_at"],
        finished_at=r["finished_at"],
        final_text=r["final_text"],
        error=r["error"],
        payer=r["payer"],
    )


def tool_call(r: Row) -> ToolCallRecord:
    result = ToolResult.model_validate_json(r["result"]) if r["result"] else None
    return ToolCallRecord(
        id=r["id"],
        session_id=r["session_id"],
        run_id=r["run_id"],
        name=r["name"],
        input=json.loads(r["input"]),
        started_at=r["started_at"],
        status=result.status if result is not None else None,
        result=result,
        finished_at=r["finished_at"],
    )


def notification(r: Row) -> NotificationRecord:
    return NotificationRecord(
        notification_id=r["notification_id"],
        agent_id=r["agent_id"],
        requested_by_agent_id=r["requested_by_agent_id"],
        session_id=r["session_id"],
        requested_by_session_id=r["requested_by_session_id"],
        run_id=r["run_id"],
        target_operator_boundary=OperatorBoundary(r["target_operator_boundary"]),
        message=r["message"],
        summary=r["summary"],
        created_at=r["created_at"],
    )
