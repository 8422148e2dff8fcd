"""A session's history as the console pages it, newest first: its turns (the messages each
took, its tool calls folded to a line, how it ended) and its audit events in words. A page
is read from the store by a cursor (`store.history`), so a long session costs what one page
does, and a page stays the same as new turns come."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from bridge.admin.audit import entry
from bridge.admin.records import AuditEntry, Capped, Paged, Said, Step, ToolCallLine, TurnView
from bridge.admin.view import AdminView
from bridge.admin.words import short_input, took
from bridge.approvals import masked
from bridge.service import Bridge
from config.schema import SwitchboardConfig
from runtime.messages import Origin, QueueEntry
from runtime.payloads import NotificationRequested, ToolFinished
from runtime.records import ApprovalStatus, RunRecord, RunStatus, ToolCallRecord
from runtime.tools.envelope import ToolResult, ToolStatus
from runtime.transcript import ToolUseBlock, TranscriptMessage

TURNS_PER_PAGE = 20
EVENTS_PER_PAGE = 50
TEXT_LIMIT = 4_000  # characters of a message or an answer shown
DETAIL_LIMIT = 4_000  # characters of a tool call's input or result shown

Fetch = Callable[..., Awaitable[list[Any]]]


class History:
    """Reads for one request, of one workspace's sessions."""

    def __init__(self, bridge: Bridge, config: SwitchboardConfig) -> None:
        self._bridge = bridge
        self._store = bridge.runtime.store
        self._view = AdminView(bridge, config)

    async def turns(
        self, workspace_id: str, session_id: str, *, older: str | None, newer: str | None
    ) -> Paged[TurnView]:
        """A page of the session's turns: the newest, or the one beside the turn `older`
        (the turns before it) or `newer` (those after it)."""
        self._view.check_session(workspace_id, session_id)

        def fetch(**where: Any) -> Awaitable[list[RunRecord]]:
            return self._store.history.runs(session_id, **where)

        runs, more_older, more_newer = await _page(fetch, older, newer, TURNS_PER_PAGE)
        return Paged(
            await self._turns(runs),
            runs[-1].id if more_older else None,
            runs[0].id if more_newer else None,
        )

    async def audit(
        self, workspace_id: str, session_id: str, *, older: int | None, newer: int | None
    ) -> Paged[AuditEntry]:
        """A page of the session's audit events, beside the sequence numbers given."""
        self._view.check_session(workspace_id, session_id)

        def fetch(**where: Any) -> Awaitable[list[Any]]:
            return self._store.history.events(session_id, **where)

        events, more_older, more_newer = await _page(fetch, older, newer, EVENTS_PER_PAGE)
        ids = [e.data.notification_id for e in events if isinstance(e.data, NotificationRequested)]
        routes = await self._bridge.store.notification_routes(ids)
        finished = [e.data.tool_use_id for e in events if isinstance(e.data, ToolFinished)]
        calls = {c.id: c for c in await self._store.tool_calls(ids=finished)} if finished else {}
        entries = [entry(e, routes, calls) for e in events]
        return Paged(
            entries,
            str(events[-1].seq) if more_older else None,
            str(events[0].seq) if more_newer else None,
        )

    async def _turns(self, runs: list[RunRecord]) -> list[TurnView]:
        ids = [r.id for r in runs]
        history = self._store.history
        messages = await history.messages_of_runs(ids)
        rows = await history.agent_rows_of_runs(ids)
        calls = {c.id: c for c in await history.tool_calls_of_runs(ids)}
        open_ids = [i for i, c in calls.items() if c.result is None]
        asked = await self._store.approvals.for_tool_uses(open_ids) if open_ids else {}
        waiting = {i for i, a in asked.items() if a.status is ApprovalStatus.PENDING}
        return [
            _turn(
                run,
                [m for m in messages if m.run_id == run.id],
                [row for run_id, row in rows if run_id == run.id],
                calls,
                waiting,
            )
            for run in runs
        ]


async def _page(fetch: Fetch, older: Any, newer: Any, limit: int) -> tuple[list[Any], bool, bool]:
    """The items of a page (newest first), whether there are older ones and newer ones. A
    cursor with nothing beyond it (or not the session's) gives the newest page."""
    if newer is not None:
        found = await fetch(newer_than=newer, limit=limit + 1)
        if len(found) > limit:
            return found[1:], True, True
    elif older is not None:
        found = await fetch(older_than=older, limit=limit + 1)
        if found:
            return found[:limit], len(found) > limit, True
    found = await fetch(limit=limit + 1)
    return found[:limit], len(found) > limit, False


def _turn(
    run: RunRecord,
    messages: list[QueueEntry],
    rows: list[TranscriptMessage],
    calls: Mapping[str, ToolCallRecord],
    waiting: set[str],
) -> TurnView:
    """The turn: the messages it took, then each model round's words and tool calls (its
    answer the last round's words)."""
    running = run.status is RunStatus.RUNNING
    steps = []
    for row in rows:
        text = row.text().strip()
        said = Said("agent", "agent", Capped.of(text, TEXT_LIMIT)) if text else None
        lines = [
            _call(use, calls.get(use.id), use.id in waiting, running) for use in row.tool_uses()
        ]
        if said is not None or lines:
            steps.append(Step(said, lines))
    return TurnView(
        run.id, run.started_at, run.status.value, outcome(run), [_said(m) for m in messages], steps
    )


def outcome(run: RunRecord) -> str:
    """How the turn ended (or that it runs), in the words its page and the live region say."""
    ran = took(run.finished_at - run.started_at) if run.finished_at is not None else ""
    why = f": {run.error}" if run.error else ""
    match run.status:
        case RunStatus.RUNNING:
            return "running"
        case RunStatus.COMPLETED:
            return f"answered in {ran}"
        case RunStatus.STOPPED:
            return f"stopped after {ran}{why}"
        case RunStatus.INTERRUPTED:
            return "interrupted: the process ended while it ran; its messages were taken again"
    return f"failed after {ran}{why}"


def _said(m: QueueEntry) -> Said:
    sender = m.message.provenance.sender
    if m.message.origin is Origin.OPERATOR:
        who, role = sender or "an operator", "operator"
    else:
        who, role = sender or m.message.kind.replace("_", " "), "other"
    return Said(who, role, Capped.of(m.message.text, TEXT_LIMIT))


def _call(
    use: ToolUseBlock, call: ToolCallRecord | None, waiting: bool, running: bool
) -> ToolCallLine:
    """A tool call the model asked for, with what its record says of it (none: it was never
    started, or a restart cut it short)."""
    tool_input = masked(use.input)
    result = call.result if call is not None else None
    ran = None
    if call is not None and call.finished_at is not None:
        ran = call.finished_at - call.started_at
    return ToolCallLine(
        use.id,
        use.name,
        short_input(tool_input),
        _call_outcome(result, waiting, running),
        took(ran),
        Capped.of(json.dumps(tool_input, indent=2, ensure_ascii=False), DETAIL_LIMIT),
        None if result is None else Capped.of(_result_text(result), DETAIL_LIMIT),
    )


# A call that did not fail of itself: never run, or cut off by a restart (`runtime/recovery.py`).
CUT_SHORT = {"denied": "denied", "approval_timed_out": "timed out", "interrupted": "interrupted"}


def _call_outcome(result: ToolResult | None, waiting: bool, running: bool) -> str:
    if result is None:
        if waiting:
            return "waiting for approval"
        return "running" if running else "no result"
    if result.status is ToolStatus.SUCCESS:
        return "ok"
    if result.status is ToolStatus.CANCELLED:
        return "stopped"
    kind = result.error.kind if result.error is not None else ""
    return CUT_SHORT.get(kind, "error")


def _result_text(result: ToolResult) -> str:
    """What the tool gave back: its output, or why it failed."""
    if result.status is not ToolStatus.SUCCESS:
        return result.error.message if result.error is not None else result.summary_text
    if result.result is None:
        return result.summary_text
    if isinstance(result.result, str):
        return result.result
    return json.dumps(result.result, indent=2, ensure_ascii=False, default=str)
