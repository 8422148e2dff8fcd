"""Closing tool calls that a stop or a crash left open, and replaying after a restart.

A tool call is never run twice: an open call is answered from its stored result when it
finished, or with a `cancelled`/`interrupted` result when it did not. A round with a call
that waits for an operator's approval stays open across a restart (the next turn asks again).
"""

from __future__ import annotations

import logging

from runtime.events import Event
from runtime.messages import QueueStatus
from runtime.payloads import RunRecovered, ToolFinished, TurnFinished
from runtime.records import ApprovalStatus, RunRecord, RunStatus
from runtime.store.store import Store
from runtime.store.writer import Writer
from runtime.tools.envelope import ToolResult, ToolStatus
from runtime.transcript import (
    Block,
    ToolResultBlock,
    Transcript,
    TranscriptMessage,
    unanswered_tool_uses,
)

log = logging.getLogger(__name__)

INTERRUPTED = ToolResult.failure(
    "interrupted", "Switchboard restarted while this tool ran; it was not run again"
)


async def answer_open_tool_calls(
    store: Store,
    w: Writer,
    session_id: str,
    run_id: str,
    transcript: Transcript,
    fallback: ToolResult,
) -> TranscriptMessage | None:
    """Append tool_result blocks for every open tool_use; returns the row it appended."""
    open_calls = unanswered_tool_uses(transcript.rows)
    if not open_calls:
        return None
    stored = {c.id: c for c in await store.tool_calls(ids=[c.id for c in open_calls])}
    blocks: list[Block] = []
    for call in open_calls:
        record = stored.get(call.id)
        if record is not None and record.result is not None:
            result = record.result
        else:
            result = fallback
            if record is not None:
                w.tool_finished(call.id, fallback)
            finished = ToolFinished(
                tool_use_id=call.id,
                name=call.name,
                status=fallback.status,
                summary=fallback.summary_text,
            )
            w.emit(Event(finished, session_id, run_id))
        blocks.append(
            ToolResultBlock(
                tool_use_id=call.id,
                content=result.for_model(),
                is_error=result.status is not ToolStatus.SUCCESS,
            )
        )
    row = TranscriptMessage(role="user", blocks=blocks)
    transcript.append(row, w.append_transcript(session_id, run_id, row))
    return row


async def recover(store: Store, session_id: str | None = None) -> int:
    """Mark runs cut off by a crash as interrupted and put their messages back in the queue:
    of every session, or of the one a replica takes over (`runtime/homes.py`)."""
    runs = await store.runs(session_id=session_id, status=RunStatus.RUNNING)
    for run in runs:
        transcript = await store.transcript(run.session_id)
        if await _finish_answered(store, run, transcript):
            continue
        open_ids = [c.id for c in unanswered_tool_uses(transcript.rows)]
        asked = await store.approvals.for_tool_uses(open_ids)
        # A round with a call still waiting for an operator's approval stays open: the next
        # turn of the session asks again and closes it (`ToolRunner.resume`).
        waiting = any(a.status is ApprovalStatus.PENDING for a in asked.values())
        async with store.write() as w:
            if not waiting:
                await answer_open_tool_calls(
                    store, w, run.session_id, run.id, transcript, INTERRUPTED
                )
            w.finish_run(
                run.id, RunStatus.INTERRUPTED, None, "the process stopped while this turn ran"
            )
            w.emit(Event(RunRecovered(status=RunStatus.INTERRUPTED), run.session_id, run.id))
        log.warning(
            "recovered an interrupted run", extra={"run_id": run.id, "session_id": run.session_id}
        )
    dequeued = await store.messages(session_id=session_id, statuses=[QueueStatus.DEQUEUED])
    if dequeued:
        async with store.write() as w:
            w.set_message_status([m.id for m in dequeued], QueueStatus.QUEUED)
    return len(runs)


async def _finish_answered(store: Store, run: RunRecord, transcript: Transcript) -> bool:
    """A run cut off after its answer was recorded (between the round that answered and the
    run's end, or its session moved to another replica then) ends with that answer: asking
    the model again would show it a transcript ending in its own answer, and answer twice."""
    last = transcript.rows[-1] if transcript.rows else None
    if last is None or last.role != "assistant" or last.tool_uses() or not last.text().strip():
        return False
    if await store.last_row_of_run(run.id) != transcript.row_ids[-1]:
        return False  # the answer is an earlier run's: this one recorded nothing after it
    taken = [m.id for m in await store.messages_of_run(run.id)]
    async with store.write() as w:
        w.finish_run(run.id, RunStatus.COMPLETED, last.text())
        w.set_message_status(taken, QueueStatus.PROCESSED)
        finished = TurnFinished(
            outcome=RunStatus.COMPLETED,
            final_text=last.text(),
            error=None,
            duration_s=round(max(w.now() - run.started_at, 0.0), 3),
            message_ids=taken,
            resumed=True,  # its answer goes out after the restart, saying so
        )
        w.emit(Event(finished, run.session_id, run.id))
    log.warning(
        "a run cut off after its answer was recorded ended with it",
        extra={"run_id": run.id, "session_id": run.session_id},
    )
    return True
