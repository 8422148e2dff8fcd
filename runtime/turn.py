"""One turn: provider rounds and tool runs, draining interjections only at the safe points.

The loop body is a `match` on what the round resolved to; every drain goes through
`checkpoint(boundary)`, so searching for `checkpoint(` finds all four safe points.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace

from runtime.agents import AgentSpec
from runtime.boundaries import Boundary
from runtime.clock import Clock
from runtime.compaction import compact
from runtime.context import Budget
from runtime.errors import ContextWindowExceededError, ProviderError, TranscriptInvariantError
from runtime.events import Event, Payload
from runtime.messages import QueueEntry, QueueMode, QueueStatus
from runtime.payloads import (
    AssistantText,
    AssistantTextDelta,
    InterjectionAdmitted,
    InterjectionDrainFailed,
    ProgressState,
    ProviderRequestRefused,
    ProviderRetry,
    ToolFinished,
    ToolStarted,
)
from runtime.prompts import interjection_row
from runtime.providers.base import (
    Provider,
    ProviderRequest,
    ProviderResponse,
    Usage,
    request_chars,
)
from runtime.records import RunStatus
from runtime.recovery import answer_open_tool_calls
from runtime.session import RunHandle, Session, TurnStopped
from runtime.steps import ContinueRound, FinalAnswer, RunTools, resolve_round
from runtime.store import Store, Writer
from runtime.tools.base import ToolContext
from runtime.tools.envelope import ToolResult, ToolStatus
from runtime.tools.registry import ToolRegistry
from runtime.transcript import (
    Block,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    Transcript,
    TranscriptMessage,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class TurnDeps:
    store: Store
    provider: Provider
    tools: ToolRegistry
    clock: Clock
    max_rounds: int
    budget: Budget
    notify: Callable[[Session, str, str], Awaitable[ToolResult]]
    spawn: Callable[[Session, str, str], Awaitable[ToolResult]]


@dataclass(frozen=True, slots=True)
class TurnOutcome:
    status: RunStatus
    final_text: str
    error: str | None = None
    usage: Usage = field(default_factory=Usage)
    context_tokens: int | None = None  # the size of its last request, as counted


class Turn:
    def __init__(
        self,
        deps: TurnDeps,
        session: Session,
        agent: AgentSpec,
        handle: RunHandle,
        transcript: Transcript,
    ) -> None:
        self.deps = deps
        self.session = session
        self.agent = agent
        self.handle = handle
        self.run_id = handle.run_id
        self.transcript = transcript
        self.started_at = handle.started_at
        self.model = deps.provider.model
        self._admitted_before_tools = False
        self._announced_round = 1  # the worker announces round 1 with turn_started
        self.usage = Usage()

    # -- the loop ----------------------------------------------------------------------

    async def run(self) -> TurnOutcome:
        outcome = await self._outcome()
        counted = self.session.context.last_request_tokens
        return replace(outcome, usage=self.usage, context_tokens=counted)

    async def _outcome(self) -> TurnOutcome:
        try:
            return await self._loop()
        except TurnStopped:
            await self.close_after_stop()
            return TurnOutcome(RunStatus.STOPPED, "", self.handle.stop_reason or None)
        except TranscriptInvariantError as exc:
            await self._emit(ProviderRequestRefused(problems=exc.problems))
            return TurnOutcome(RunStatus.FAILED, "", str(exc))
        except ProviderError as exc:
            return TurnOutcome(RunStatus.FAILED, "", str(exc))

    async def _loop(self) -> TurnOutcome:
        round_no = 0
        while True:
            round_no += 1
            self.handle.raise_if_stopped()
            if round_no > self.deps.max_rounds:
                return TurnOutcome(
                    RunStatus.FAILED,
                    "",
                    f"the turn did not finish within {self.deps.max_rounds} rounds",
                )
            if round_no > 1:
                await self.checkpoint(Boundary.BEFORE_PROVIDER_REQUEST)
            if round_no > self._announced_round:
                await self.progress(f"model round {round_no}")
                self._announced_round = round_no
            request = await self._fit(self._request(), round_no)
            try:
                response = await self._send(request)
            except ContextWindowExceededError as exc:
                # The estimate fell short of the provider's count: learn from its count,
                # compact, and send once more if that made the request smaller.
                if exc.request_tokens:
                    self.session.context.counted(request, exc.request_tokens)
                oldest = self.transcript.row_ids[:1]
                request = await self._fit(self._request(), round_no, force=True)
                if self.transcript.row_ids[:1] == oldest:
                    raise
                response = await self._send(request)
            step, recorded = resolve_round(response)
            self._check_new_tool_ids(recorded)
            if recorded.blocks and any(b for b in recorded.blocks if not _blank(b)):
                said = AssistantText(
                    text=recorded.text(), round=round_no, tool_calls=len(recorded.tool_uses())
                )
                await self._record(recorded, said)
            match step:
                case FinalAnswer(text=text):
                    if await self.checkpoint(Boundary.AFTER_PROVIDER_ROUND):
                        continue
                    return TurnOutcome(RunStatus.COMPLETED, text)
                case RunTools(calls=calls):
                    self._admitted_before_tools = bool(
                        await self.checkpoint(Boundary.BEFORE_TOOL_EXECUTION)
                    )
                    self.handle.raise_if_stopped()
                    await self._run_tools(calls, round_no)
                    await self.checkpoint(Boundary.AFTER_TOOL_RESULTS)
                case ContinueRound():
                    continue
                case _:
                    raise AssertionError(f"unknown next step {step!r}")

    def _request(self) -> ProviderRequest:
        return ProviderRequest(
            model=self.model,
            system=self.agent.system_prompt,
            messages=list(self.transcript.rows),
            tools=self.deps.tools.specs(self.agent.tools),
            max_tokens=self.deps.budget.max_tokens,
            summary=self.transcript.summary,
            files=self.transcript.files,
        )

    async def _fit(
        self, request: ProviderRequest, round_no: int, *, force: bool = False
    ) -> ProviderRequest:
        """The compaction step: when the request would fill too much of the context window
        (or the operator asked, with /compact), the older rows become a summary first.
        Operator messages drain around it, as at any safe point."""
        tokens = self.session.context.estimate(request_chars(request))
        wanted = force or self.session.compact_requested
        if not (wanted or self.deps.budget.needs_compaction(tokens)):
            return request
        requested, self.session.compact_requested = self.session.compact_requested, False
        await self.checkpoint(Boundary.BEFORE_COMPACTION)
        await self.progress("summarizing the earlier conversation")
        compacted = await compact(
            self.deps.store,
            self.deps.provider,
            self.transcript,
            session_id=self.session.id,
            run_id=self.run_id,
            budget=self.deps.budget,
            context=self.session.context,
            guard=self.handle.inflight_op,
            requested=requested,
        )
        if compacted is not None:
            self.usage += compacted.usage
        await self.checkpoint(Boundary.AFTER_COMPACTION)
        await self.progress(f"model round {round_no}")
        return self._request()

    async def _send(self, request: ProviderRequest) -> ProviderResponse:
        store = self.deps.store

        def on_text(delta: str) -> None:
            store.publish_ephemeral(
                Event(AssistantTextDelta(delta=delta), self.session.id, self.run_id)
            )

        def on_retry(attempt: int, delay: float, error: str) -> None:
            asyncio.get_running_loop().create_task(
                self._emit(ProviderRetry(attempt=attempt, delay_s=delay, error=error))
            )

        response = await self.handle.inflight_op(
            self.deps.provider.complete(request, on_text, on_retry)
        )
        self.session.context.observe(request, response.usage)
        self.usage += response.usage
        return response

    def _check_new_tool_ids(self, recorded: TranscriptMessage) -> None:
        """A round whose tool_use ids repeat would poison the transcript: fail it instead."""
        ids = [b.id for b in recorded.tool_uses()]
        known = self.transcript.tool_use_ids
        repeated = sorted({i for i in ids if ids.count(i) > 1 or i in known})
        if repeated:
            raise ProviderError(f"the model returned duplicate tool_use ids: {', '.join(repeated)}")

    # -- safe points -------------------------------------------------------------------

    async def checkpoint(self, boundary: Boundary) -> list[QueueEntry]:
        """Drain admitted interjections into the transcript; the one place that does."""
        if self.session.mode is not QueueMode.STEER:
            return []
        entries = self.session.queue.take_interjections()
        if not entries:
            return []
        row = interjection_row(entries)
        try:
            async with self.deps.store.write() as w:
                ids = [e.id for e in entries]
                w.set_message_status(
                    ids, QueueStatus.INTERJECTED, run_id=self.run_id, boundary=boundary
                )
                row_id = w.append_transcript(self.session.id, self.run_id, row, ids)
                for e in entries:
                    admitted = InterjectionAdmitted(
                        message_id=e.id, boundary=boundary, sender=e.message.provenance.sender
                    )
                    w.emit(Event(admitted, self.session.id, self.run_id))
        except Exception as exc:
            self.session.queue.push_front(entries)
            log.exception(
                "interjection drain failed; messages back at the queue front",
                extra={"session_id": self.session.id, "boundary": boundary},
            )
            await self._emit(
                InterjectionDrainFailed(
                    boundary=boundary, message_ids=[e.id for e in entries], error=str(exc)
                )
            )
            return []
        for e in entries:
            e.status = QueueStatus.INTERJECTED
        self.transcript.append(row, row_id, ids)
        self.transcript.files.update(await self.deps.store.files([a.id for a in row.attachments()]))
        return entries

    # -- tools -------------------------------------------------------------------------

    async def _run_tools(self, calls: list[ToolUseBlock], round_no: int) -> None:
        async with self.deps.store.write() as w:
            for call in calls:
                w.tool_started(call.id, self.session.id, self.run_id, call.name, call.input)
                started = ToolStarted(tool_use_id=call.id, name=call.name, input=call.input)
                w.emit(Event(started, self.session.id, self.run_id))
            labels = ", ".join(self.deps.tools.label(c.name) for c in calls)
            w.emit(self._progress_event(f"running {labels}"))
        solo = len(calls) == 1
        results = await self.handle.inflight_op(
            asyncio.gather(*(self._run_one(call, record=not solo) for call in calls))
        )
        row = TranscriptMessage(
            role="user",
            blocks=[
                ToolResultBlock(
                    tool_use_id=call.id,
                    content=result.for_model(),
                    is_error=result.status is not ToolStatus.SUCCESS,
                )
                for call, result in zip(calls, results, strict=True)
            ],
        )
        async with self.deps.store.write() as w:
            if solo:
                self._record_finish(w, calls[0], results[0])
            row_id = w.append_transcript(self.session.id, self.run_id, row)
            # The next round starts right after these results: announce it in this write.
            w.emit(self._progress_event(f"model round {round_no + 1}"))
        self.transcript.append(row, row_id)
        self._announced_round = round_no + 1

    async def _run_one(self, call: ToolUseBlock, *, record: bool) -> ToolResult:
        """Run one call; with `record`, store its result the moment it finishes (in a batch,
        so that a stop or a crash keeps the results of the calls that did finish)."""
        ctx = ToolContext(
            session_id=self.session.id,
            run_id=self.run_id,
            tool_use_id=call.id,
            notify=lambda message: self.deps.notify(self.session, self.run_id, message),
            spawn=lambda task: self.deps.spawn(self.session, self.run_id, task),
            wait_for_interjection=self._wait_for_interjection,
        )
        try:
            result = await self.deps.tools.run(call.name, call.input, ctx, self.agent.tools)
        except Exception as exc:
            log.exception("tool crashed", extra={"tool": call.name, "session_id": self.session.id})
            result = ToolResult.failure("tool_crashed", f"{call.name} raised {exc!r}")
        if record:
            async with self.deps.store.write() as w:
                self._record_finish(w, call, result)
        return result

    def _record_finish(self, w: Writer, call: ToolUseBlock, result: ToolResult) -> None:
        w.tool_finished(call.id, result)
        finished = ToolFinished(
            tool_use_id=call.id, name=call.name, status=result.status, summary=result.summary_text
        )
        w.emit(Event(finished, self.session.id, self.run_id))

    async def _wait_for_interjection(self, seconds: float) -> bool:
        """True at once if an operator message is waiting; else wait up to `seconds` for one."""
        if self._admitted_before_tools or self.session.queue.has_interjection():
            return True
        if seconds <= 0:
            return False
        signal = self.session.interjection_signal()
        await self.progress("waiting", state=ProgressState.WAITING)
        waiter = asyncio.ensure_future(signal.wait())
        sleeper = asyncio.ensure_future(self.deps.clock.sleep(seconds))
        try:
            await asyncio.wait({waiter, sleeper}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()
            sleeper.cancel()
        return signal.is_set() and self.session.mode is QueueMode.STEER

    # -- after a stop ------------------------------------------------------------------

    async def close_after_stop(self) -> None:
        """Make the transcript provider-valid again: every open tool call gets a result."""
        cancelled = ToolResult.cancelled(self.handle.stop_reason or "stopped")
        async with self.deps.store.write() as w:
            await answer_open_tool_calls(
                self.deps.store, w, self.session.id, self.run_id, self.transcript, cancelled
            )

    # -- helpers -----------------------------------------------------------------------

    def _progress_event(self, step: str, *, state: ProgressState = ProgressState.RUNNING) -> Event:
        progress = self.handle.progress(self.deps.clock.monotonic(), state, step)
        return Event(progress, self.session.id, self.run_id)

    async def progress(self, step: str, *, state: ProgressState = ProgressState.RUNNING) -> None:
        await self.deps.store.emit(self._progress_event(step, state=state))

    async def _record(self, row: TranscriptMessage, said: Payload) -> None:
        async with self.deps.store.write() as w:
            row_id = w.append_transcript(self.session.id, self.run_id, row)
            w.emit(Event(said, self.session.id, self.run_id))
        self.transcript.append(row, row_id)

    async def _emit(self, payload: Payload) -> None:
        await self.deps.store.emit(Event(payload, self.session.id, self.run_id))


def _blank(block: Block) -> bool:
    return isinstance(block, TextBlock) and not block.text.strip()
