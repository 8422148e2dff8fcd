"""Operator approval of tool calls (issue 15).

A call of a tool marked `requires_approval` waits in `ask` until an operator answers
(`decide`), its time runs out, or its turn is stopped. The request and its answer are rows
(`approvals`) written with their ledger events: the bridge shows the buttons when it reads
`ApprovalRequested`, and after a restart recovery leaves the call open, so the session's
next turn asks again, finds the row, and shows the buttons again (`reshown`). An answer is
recorded once (the first one wins); the tool runs only in the turn that holds the call and
only after the row says approved, so a restart never runs it twice.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from runtime.clock import Clock
from runtime.errors import ConditionFailedError
from runtime.events import Event
from runtime.ids import new_id
from runtime.payloads import ApprovalDecided, ApprovalRequested
from runtime.records import ApprovalRecord, ApprovalStatus
from runtime.store.store import Store
from runtime.tools.base import Approval
from runtime.tools.envelope import ToolResult
from runtime.transcript import ToolUseBlock

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Decision:
    """An approval after someone answered it; `changed`: this answer decided it (False: it
    had been answered before, and `record` says how)."""

    record: ApprovalRecord
    changed: bool


def refusal(record: ApprovalRecord) -> ToolResult:
    """What the model is told of a call that was not approved."""
    if record.status is ApprovalStatus.TIMED_OUT:
        waited = round(record.deadline - record.created_at)
        return ToolResult.failure(
            "approval_timed_out",
            f"approval timed out: no operator answered within {waited} s; {record.tool} "
            "was not run",
        )
    if record.status is ApprovalStatus.CANCELLED:
        return ToolResult.cancelled("the turn was stopped while this call waited for approval")
    return ToolResult.failure(
        "denied", f"denied by operator {record.decided_by}; {record.tool} was not run"
    )


@dataclass(slots=True)
class _Wait:
    """A turn waiting for the answer to one call. `waiting(True)` is told once the request is
    stored and the wait begins, `waiting(False)` the moment it ends (an answer delivered, the
    wait given up): what the turn knows of it is never behind the store."""

    waiting: Callable[[bool], None]
    answered: asyncio.Event = field(default_factory=asyncio.Event)
    began: bool = False

    def begin(self) -> None:
        self.began = True
        self.waiting(True)

    def end(self) -> None:
        if self.began:
            self.began = False
            self.waiting(False)


class Approvals:
    def __init__(self, store: Store, clock: Clock) -> None:
        self._store = store
        self._clock = clock
        self._waits: dict[str, _Wait] = {}  # by tool_use id, while a turn waits
        self._by_approval: dict[str, _Wait] = {}  # the same, by approval id once asked
        self._lock = asyncio.Lock()  # one answer at a time: the first one wins

    async def ask(
        self,
        call: ToolUseBlock,
        *,
        tool: str,
        approval: Approval,
        session_id: str,
        run_id: str,
        agent_id: str,
        waiting: Callable[[bool], None] = lambda _: None,
    ) -> ApprovalRecord:
        """Ask for an operator's approval of `call` (again, after a restart) and wait for
        the answer; returns the approval as answered. `waiting`: told True once the request
        is stored and the wait begins, False the moment it ends."""
        # Listening before reading: an answer landing in between is not missed.
        wait = self._waits.setdefault(call.id, _Wait(waiting))
        asked_id: str | None = None  # heard of by its id once asked (`heard`)
        try:
            record = (await self._store.approvals.for_tool_uses([call.id])).get(call.id)
            if record is not None and record.status is not ApprovalStatus.PENDING:
                return record
            if record is None:
                now = self._clock.wall()
                record = ApprovalRecord(
                    id=new_id("apr"),
                    tool_use_id=call.id,
                    session_id=session_id,
                    run_id=run_id,
                    agent_id=agent_id,
                    tool=tool,
                    input=call.input,
                    status=ApprovalStatus.PENDING,
                    created_at=now,
                    deadline=now + approval.timeout_s,
                )
            reshown = record.run_id != run_id
            asked = ApprovalRequested(
                approval_id=record.id,
                tool_use_id=call.id,
                tool=record.tool,
                input=record.input,
                agent_id=record.agent_id,
                deadline=record.deadline,
                timeout_s=round(record.deadline - record.created_at, 3),
                reshown=reshown,
            )
            asked_id = record.id
            self._by_approval[asked_id] = wait
            async with self._store.write() as w:
                if not reshown:
                    w.insert_approval(record)
                w.emit(Event(asked, session_id, run_id))
            if not wait.answered.is_set():
                wait.begin()
            return await self._answer(record, wait.answered)
        finally:
            wait.end()
            self._waits.pop(call.id, None)
            if asked_id is not None:
                self._by_approval.pop(asked_id, None)

    async def _answer(self, record: ApprovalRecord, answered: asyncio.Event) -> ApprovalRecord:
        remaining = record.deadline - self._clock.wall()
        if remaining > 0 and not answered.is_set():
            waiter = asyncio.ensure_future(answered.wait())
            timer = asyncio.ensure_future(self._clock.sleep(remaining))
            try:
                await asyncio.wait({waiter, timer}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                waiter.cancel()
                timer.cancel()
        if not answered.is_set():
            decision = await self.decide(record.id, ApprovalStatus.TIMED_OUT, None)
            if decision is not None:
                return decision.record
        current = await self._store.approvals.get(record.id)
        assert current is not None
        return current

    async def decide(
        self, approval_id: str, status: ApprovalStatus, by: str | None
    ) -> Decision | None:
        """Answer a pending approval (approved, denied, timed out, cancelled); None when there
        is no such approval. The waiting turn, if any, goes on at once."""
        async with self._lock:
            record = await self._store.approvals.get(approval_id)
            if record is None:
                return None
            if record.status is not ApprovalStatus.PENDING:
                return Decision(record, changed=False)
            decided = ApprovalDecided(
                approval_id=approval_id, tool=record.tool, status=status, decided_by=by
            )
            try:
                async with self._store.write() as w:
                    w.decide_approval(approval_id, status, by)
                    w.emit(Event(decided, record.session_id, record.run_id))
                    now = w.now()
            except ConditionFailedError:  # answered meanwhile, on another replica
                answered = await self._store.approvals.get(approval_id)
                assert answered is not None
                return Decision(answered, changed=False)
            record = replace(record, status=status, decided_by=by, decided_at=now)
        # Every answer comes here (an operator's, the console's, a timeout, a stop): one line.
        log.info(
            "approval decided",
            extra={
                "approval_id": approval_id,
                "decision": status.value,
                "tool": record.tool,
                "agent": record.agent_id,
                "session_id": record.session_id,
                **({"by": by} if by else {}),  # none for a timeout or a stop
            },
        )
        wait = self._waits.get(record.tool_use_id)
        if wait is not None:
            wait.answered.set()
            wait.end()
        return Decision(record, changed=True)

    def heard(self, decided: ApprovalDecided) -> None:
        """An approval was answered (on any replica): a call of this one waiting for it goes
        on at once (the answer is read from the store)."""
        wait = self._by_approval.get(decided.approval_id)
        if wait is not None:
            wait.answered.set()
            wait.end()

    async def cancel(self, tool_use_ids: list[str]) -> None:
        """The turn was stopped: its calls still waiting for an answer wait no more."""
        waiting = await self._store.approvals.for_tool_uses(tool_use_ids)
        for record in waiting.values():
            if record.status is ApprovalStatus.PENDING:
                await self.decide(record.id, ApprovalStatus.CANCELLED, None)

    async def get(self, approval_id: str) -> ApprovalRecord | None:
        return await self._store.approvals.get(approval_id)

    async def pending(self, session_ids: list[str]) -> list[ApprovalRecord]:
        """The approvals waiting for an answer in these sessions, oldest first."""
        return await self._store.approvals.pending(session_ids)
