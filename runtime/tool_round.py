"""A turn's tool rounds: run the calls of one model round and record their results; wait for
an operator's approval first where the tool asks for it; close the round a restart left open
(a call that waited for approval); answer every open call after a stop.

A tool call is never run twice: its result is stored the moment it finishes, and a call
whose result was not stored is answered as interrupted, not run again.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from runtime.agents import AgentSpec
from runtime.approvals import Approvals, refusal
from runtime.clock import Clock
from runtime.events import Event
from runtime.ids import new_id
from runtime.memory import Memories
from runtime.messages import QueueMode
from runtime.payloads import (
    LISTENING_STEP,
    MemoryOffered,
    ProgressState,
    ToolFinished,
    ToolStarted,
    thinking_step,
)
from runtime.recall import TurnMemory, turn_memory
from runtime.records import ApprovalStatus
from runtime.recovery import INTERRUPTED, answer_open_tool_calls
from runtime.session import RunHandle, Session
from runtime.steps import WaitForApproval
from runtime.store.store import Store
from runtime.store.writer import Writer
from runtime.tools.base import Approval, ToolContext, Woken
from runtime.tools.envelope import ToolImage, ToolResult, ToolStatus
from runtime.tools.registry import ToolRegistry
from runtime.transcript import (
    AttachmentBlock,
    AttachmentForm,
    ToolResultBlock,
    ToolUseBlock,
    Transcript,
    TranscriptMessage,
    unanswered_tool_uses,
)

log = logging.getLogger(__name__)

Progress = Callable[[str, ProgressState], Awaitable[None]]
ProgressEvent = Callable[[str], Event]


@dataclass(frozen=True, slots=True)
class ToolDeps:
    store: Store
    tools: ToolRegistry
    approvals: Approvals
    clock: Clock
    notify: Callable[[Session, str, str], Awaitable[ToolResult]]
    spawn: Callable[[Session, str, str], Awaitable[ToolResult]]
    wake_later: Callable[[Session, str, str, str], Awaitable[ToolResult]]
    memories: Memories | None = None


async def waiting_round(store: Store, transcript: Transcript) -> bool:
    """Does the transcript end in a round a restart left open for an approval? (Any other
    open round is a broken transcript, which the provider's check refuses.)"""
    ids = [c.id for c in unanswered_tool_uses(transcript.rows)]
    return bool(ids) and bool(await store.approvals.for_tool_uses(ids))


def picture(tool: str, n: int, image: ToolImage) -> tuple[AttachmentBlock, bytes]:
    """A picture a tool returned, as the file the transcript row refers to."""
    block = AttachmentBlock(
        id=new_id("att"),
        name=f"{tool} image {n}",
        media_type=image.media_type,
        form=AttachmentForm.IMAGE,
        size=len(image.data),
    )
    return block, image.data


class ToolRunner:
    """Runs the tool calls of one turn (`Turn` makes one and hands it its transcript)."""

    def __init__(
        self,
        deps: ToolDeps,
        session: Session,
        agent: AgentSpec,
        handle: RunHandle,
        transcript: Transcript,
        progress: Progress,
        progress_event: ProgressEvent,
    ) -> None:
        self.deps = deps
        self.session = session
        self.agent = agent
        self.handle = handle
        self.run_id = handle.run_id
        self.transcript = transcript
        self._progress = progress
        self._progress_event = progress_event
        self.admitted_before_tools = False  # an interjection came in just before this round
        self.memory: TurnMemory | None = None  # the turn's, once `open_memory` read it

    async def open_memory(self) -> TurnMemory:
        """Who the turn speaks for and the memories its first message recalls: read once,
        before its first model call; its tool calls remember, recall and forget as that."""
        self.memory = await turn_memory(
            self.deps.memories,
            self.agent,
            self.session.id,
            self.handle.message_ids[0] if self.handle.message_ids else None,
            self.handle.first_message,
        )
        if self.memory.memories is not None:
            offered = MemoryOffered(
                agent_id=self.agent.id,
                memories=self.memory.offered_count,
                tokens=math.ceil(len(self.memory.offered) * self.session.context.tokens_per_char),
            )
            self.deps.store.publish_ephemeral(Event(offered, self.session.id, self.run_id))
        return self.memory

    async def run(self, calls: list[ToolUseBlock], round_no: int) -> list[ToolResult]:
        """Run one round's calls side by side; their results become one transcript row."""
        async with self.deps.store.write() as w:
            for call in calls:
                w.tool_started(call.id, self.session.id, self.run_id, call.name, call.input)
                started = ToolStarted(tool_use_id=call.id, name=call.name, input=call.input)
                w.emit(Event(started, self.session.id, self.run_id))
            labels = ", ".join(self.deps.tools.label(c.name) for c in calls)
            w.emit(self._progress_event(f"running {labels}"))
        solo = len(calls) == 1
        self.handle.open_calls = len(calls)
        try:
            results = await self.handle.inflight_op(
                asyncio.gather(*(self._run_one(call, record=not solo) for call in calls))
            )
        finally:
            self.handle.open_calls = 0
        await self._close_round(calls, results, record_solo=solo, next_round=round_no + 1)
        return list(results)

    async def open_round(self) -> WaitForApproval | None:
        """The round a restart left open, if the transcript ends in one: recovery keeps a
        round open while one of its calls waits for an operator's approval."""
        calls = unanswered_tool_uses(self.transcript.rows)
        ids = [c.id for c in calls]
        asked = await self.deps.store.approvals.for_tool_uses(ids) if ids else {}
        return WaitForApproval(calls, asked) if asked else None

    async def resume(self, waiting: WaitForApproval) -> None:
        """Close the round a restart left open. A call waiting for approval is asked again
        (its buttons shown again) and run once approved; a call that finished keeps its
        stored result; any other is answered as interrupted (it may have run: it is not
        run again)."""
        calls, asked = waiting.calls, waiting.asked
        ids = [c.id for c in calls]
        stored = {c.id: c for c in await self.deps.store.tool_calls(ids=ids)}

        async def close(call: ToolUseBlock) -> ToolResult:
            record = stored.get(call.id)
            if record is not None and record.result is not None:
                self.handle.call_kept()
                return record.result
            approval = asked.get(call.id)
            if approval is not None and approval.status is ApprovalStatus.PENDING:
                return await self._run_one(call, record=True, waiting=True)
            async with self.deps.store.write() as w:
                self._record_finish(w, call, INTERRUPTED)
            self.handle.call_kept()
            return INTERRUPTED

        self.handle.open_calls = len(calls)
        try:
            results = await self.handle.inflight_op(asyncio.gather(*(close(c) for c in calls)))
        finally:
            self.handle.open_calls = 0
        await self._close_round(calls, results, record_solo=False, next_round=1)

    async def _close_round(
        self,
        calls: list[ToolUseBlock],
        results: list[ToolResult],
        *,
        record_solo: bool,
        next_round: int,
    ) -> None:
        if self.memory is not None:  # what is kept after reading these results came from them
            foreign = any(self.deps.tools.foreign(c.name) for c in calls)
            self.memory = self.memory.after_tools(foreign)
        pictures = {
            call.id: [
                picture(self.deps.tools.label(call.name), i, image)
                for i, image in enumerate(result.images, 1)
            ]
            for call, result in zip(calls, results, strict=True)
        }
        row = TranscriptMessage(
            role="user",
            blocks=[
                ToolResultBlock(
                    tool_use_id=call.id,
                    content=result.for_model(),
                    is_error=result.status is not ToolStatus.SUCCESS,
                    attachments=[block for block, _ in pictures[call.id]],
                )
                for call, result in zip(calls, results, strict=True)
            ],
        )
        async with self.deps.store.write() as w:
            if record_solo:
                self._record_finish(w, calls[0], results[0])
            for call_id, stored in pictures.items():
                for block, data in stored:
                    w.store_file(block.id, call_id, data)
            row_id = w.append_transcript(self.session.id, self.run_id, row)
            # The next round starts right after these results: announce it in this write.
            w.emit(self._progress_event(thinking_step(next_round)))
        self.transcript.append(row, row_id)
        self.transcript.files.update({b.id: d for stored in pictures.values() for b, d in stored})

    async def _run_one(
        self, call: ToolUseBlock, *, record: bool, waiting: bool = False
    ) -> ToolResult:
        """Run one call, after an operator approved it where its tool asks for that (`waiting`:
        an approval was asked before a restart); with `record`, store its result the moment it
        finishes (in a batch, so that a stop or a crash keeps the results of the calls that
        did finish)."""
        approval = self.deps.tools.approval(call.name, self.agent.offered_tools)
        if approval is None and waiting:
            approval = Approval()  # asked under an earlier config: the stored request holds
        result = await self._approved(call, approval) if approval is not None else None
        if result is None:
            result = await self._execute(call)
        if record:
            async with self.deps.store.write() as w:
                self._record_finish(w, call, result)
            self.handle.call_kept()
        return result

    async def _approved(self, call: ToolUseBlock, approval: Approval) -> ToolResult | None:
        """None once an operator approved the call; else the result that says why not."""
        label = self.deps.tools.label(call.name)
        await self._progress(f"waiting for an operator to approve {label}", ProgressState.WAITING)
        answered = await self.deps.approvals.ask(
            call,
            tool=label,
            approval=approval,
            session_id=self.session.id,
            run_id=self.run_id,
            agent_id=self.session.record.agent_id,
            waiting=self.handle.asking_operator,
        )
        if answered.status is not ApprovalStatus.APPROVED:
            return refusal(answered)
        await self._progress(f"running {label}", ProgressState.RUNNING)
        return None

    async def _execute(self, call: ToolUseBlock) -> ToolResult:
        ctx = ToolContext(
            session_id=self.session.id,
            run_id=self.run_id,
            tool_use_id=call.id,
            notify=lambda message: self.deps.notify(self.session, self.run_id, message),
            spawn=lambda task: self.deps.spawn(self.session, self.run_id, task),
            wait_for_interjection=self._wait_for_interjection,
            wake_later=lambda when, note: self.deps.wake_later(
                self.session, self.run_id, when, note
            ),
            memory=self.memory if self.memory and self.memory.memories else None,
        )
        try:
            return await self.deps.tools.run(call.name, call.input, ctx, self.agent.offered_tools)
        except Exception as exc:
            log.exception("tool crashed", extra={"tool": call.name, "session_id": self.session.id})
            return ToolResult.failure("tool_crashed", f"{call.name} raised {exc!r}")

    def _record_finish(self, w: Writer, call: ToolUseBlock, result: ToolResult) -> None:
        w.tool_finished(call.id, result)
        finished = ToolFinished(
            tool_use_id=call.id, name=call.name, status=result.status, summary=result.summary_text
        )
        w.emit(Event(finished, self.session.id, self.run_id))

    async def _wait_for_interjection(self, seconds: float) -> Woken:
        """At once if an operator message is waiting or the process is stopping; else wait up
        to `seconds` for either."""
        if self.admitted_before_tools or self.session.queue.has_interjection():
            return Woken.OPERATOR
        if self.handle.hands_back:
            return Woken.STOPPING
        if seconds <= 0:
            return Woken.TIMED_OUT
        signal = self.session.interjection_signal()
        await self._progress(LISTENING_STEP, ProgressState.WAITING)
        waiters = [
            asyncio.ensure_future(signal.wait()),
            asyncio.ensure_future(self.handle.handed_back.wait()),
            asyncio.ensure_future(self.deps.clock.sleep(seconds)),
        ]
        try:
            await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in waiters:
                waiter.cancel()
        if signal.is_set() and self.session.mode is QueueMode.STEER:
            return Woken.OPERATOR
        return Woken.STOPPING if self.handle.hands_back else Woken.TIMED_OUT

    async def close_after_stop(self) -> None:
        """Make the transcript provider-valid again: every open tool call gets a result, and
        a call still waiting for approval waits no more (its buttons answer that it stopped)."""
        open_ids = [c.id for c in unanswered_tool_uses(self.transcript.rows)]
        await self.deps.approvals.cancel(open_ids)
        cancelled = ToolResult.cancelled(self.handle.stop_reason or "stopped")
        async with self.deps.store.write() as w:
            await answer_open_tool_calls(
                self.deps.store, w, self.session.id, self.run_id, self.transcript, cancelled
            )
