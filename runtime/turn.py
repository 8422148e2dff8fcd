"""One turn: provider rounds and tool runs, draining interjections only at the safe points.

The loop body is one `match` on what each step resolved to (the closed set of next steps in
runtime/steps.py: a model round, a budget hold, an approval a restart left waiting, tools, a
wake-up that ends the turn, ...); every drain goes through `checkpoint(boundary)`, so
searching for `checkpoint(` finds every safe point (the six `Boundary` members).
"""

from __future__ import annotations

import logging
from dataclasses import replace

from runtime.agents import AgentSpec
from runtime.boundaries import Boundary
from runtime.compaction import compact
from runtime.errors import (
    ContextWindowExceededError,
    Failure,
    ProviderError,
    TranscriptInvariantError,
)
from runtime.events import Event, Payload
from runtime.guards import CallGuard
from runtime.live_answer import LiveAnswer
from runtime.memory_flush import MemoryFlush
from runtime.messages import QueueEntry, QueueMode, QueueStatus
from runtime.payloads import (
    AssistantText,
    InterjectionAdmitted,
    InterjectionDrainFailed,
    ProgressState,
    ProviderRequestRefused,
    SpendHeld,
    SpendReleased,
    thinking_step,
)
from runtime.prompts import interjection_row
from runtime.providers.base import ProviderRequest, ProviderResponse, Usage, request_chars
from runtime.providers.fallback import SessionProvider
from runtime.records import RunStatus
from runtime.session import RunHandle, Session, TurnStopped
from runtime.spend import CallPurpose, Charge, HoldKind, SpendHold
from runtime.steps import (
    CallModel,
    ContinueRound,
    EndForWakeup,
    EndTurn,
    FinalAnswer,
    HoldForBudget,
    NextRound,
    NextStep,
    RunTools,
    WaitForApproval,
    resolve_round,
    resolve_tools,
    words_of,
)
from runtime.store.usage import Bill, bill_of
from runtime.tool_round import ToolRunner
from runtime.tools.envelope import ToolResult
from runtime.transcript import ToolUseBlock, Transcript, TranscriptMessage
from runtime.turn_types import TurnDeps, TurnOutcome

log = logging.getLogger(__name__)

RECHECK_S = 60.0  # a turn a budget holds asks the gate again this often (a period may end)


class Turn:
    def __init__(
        self,
        deps: TurnDeps,
        session: Session,
        agent: AgentSpec,
        handle: RunHandle,
        transcript: Transcript,
        max_rounds: int | None = None,
    ) -> None:
        self.deps = deps
        self.session = session
        self.agent = agent
        self.handle = handle
        self.run_id = handle.run_id
        self.transcript = transcript
        self.started_at = handle.started_at
        self._announced_round = 1  # the worker announces round 1 with turn_started
        self.tool_runner = ToolRunner(
            deps.tool_deps(),
            session,
            agent,
            handle,
            transcript,
            lambda step, state: self.progress(step, state=state),
            self._progress_event,
        )
        self.usage = Usage()
        self.rounds = 0
        self.charge = Charge(session.id, agent.id, handle.payer, handle.run_id)
        self.guard = CallGuard(deps.gate, deps.limits, handle, self.charge)
        if isinstance(deps.provider, SessionProvider):  # a fallback's call: asked of the gate
            checked = deps.provider.checked_by(lambda c: self.guard.allows(c.model))
            self.deps = replace(deps, provider=checked)
        # A message may cap its turn lower than the runtime does (a schedule's max_rounds).
        self.max_rounds = min(deps.max_rounds, max_rounds or deps.max_rounds)

    @property
    def model(self) -> str:
        """The model the next call goes to: a fallback's once the turn moved to it."""
        return self.deps.provider.model

    # -- the loop ----------------------------------------------------------------------

    async def run(self) -> TurnOutcome:
        try:
            outcome = await self._outcome()
        finally:
            await self.deps.gate.finished(self.charge)  # a failed call's reservation
        counted = self.session.context.last_request_tokens
        return replace(outcome, usage=self.usage, context_tokens=counted, rounds=self.rounds)

    async def _outcome(self) -> TurnOutcome:
        try:
            return await self._loop()
        except TurnStopped:
            await self.tool_runner.close_after_stop()  # every open tool call gets a result
            return TurnOutcome(RunStatus.STOPPED, "", self.handle.stop_reason or None)
        except TranscriptInvariantError as exc:
            await self._emit(ProviderRequestRefused(problems=exc.problems))
            return TurnOutcome(RunStatus.FAILED, "", str(exc))
        except ProviderError as exc:
            return TurnOutcome(RunStatus.FAILED, "", str(exc))

    async def _loop(self) -> TurnOutcome:
        """One `match` on what each step resolved to, until one ends the turn."""
        self.memory = await self.tool_runner.open_memory()  # who asks; memories offered
        step: NextStep = await self.tool_runner.open_round() or NextRound()
        while True:
            match step:
                case WaitForApproval() as waiting:
                    await self.tool_runner.resume(waiting)
                    step = NextRound()
                case NextRound() | ContinueRound():
                    step = await self._next_round()
                case HoldForBudget() as held:
                    step = await self._wait_out(held)
                case CallModel(request=request, chars=chars):
                    step = await self._call_model(request, chars)
                case FinalAnswer(text=text):
                    if not await self.checkpoint(Boundary.AFTER_PROVIDER_ROUND):
                        return TurnOutcome(RunStatus.COMPLETED, text)
                    step = NextRound()
                case RunTools() as tools:
                    results, admitted = await self._run_tools(tools.calls)
                    step = resolve_tools(tools, results, admitted)
                case EndForWakeup(text=text):  # it picks up when the wake-up fires
                    return TurnOutcome(RunStatus.COMPLETED, text)
                case EndTurn(status=status, reason=reason):  # before a call: nothing is open
                    return TurnOutcome(status, "", reason)
                case _:
                    raise AssertionError(f"unknown next step {step!r}")

    async def _next_round(self) -> EndTurn | HoldForBudget | CallModel:
        """A new round: its request, once the guards and the spend gate let it through."""
        self.handle.raise_if_stopped()
        self.handle.raise_if_handed_back()  # the last round is recorded: a safe point
        if self.rounds >= self.max_rounds:
            reason = f"the turn did not finish within {self.max_rounds} rounds"
            return EndTurn(RunStatus.FAILED, reason)
        self.rounds += 1
        if self.rounds > 1:
            await self.checkpoint(Boundary.BEFORE_PROVIDER_REQUEST)
        request = self._request()
        chars = request_chars(request)  # once a round: it walks the whole transcript
        estimate = self.session.context.estimate(chars)
        max_tokens = self.deps.budget.max_tokens
        held = await self.guard.before_call(self.model, self.usage, estimate, max_tokens)
        return held or CallModel(request, chars)

    async def _wait_out(self, held: HoldForBudget) -> EndTurn | CallModel:
        """A budget holds the round's call: say so, and wait until an approval, a raised
        limit or the period's end lets it go (asking the gate again every `RECHECK_S`), or
        the gate ends the turn. What operators said meanwhile drains before the call."""
        hold: SpendHold | None = held.hold
        # Held again after an approval: its step is spent, and only a new approval goes on.
        self.handle.spend_approved_by = None
        await self._emit(
            SpendHeld(
                kind=held.hold.kind,
                budget=held.hold.budget,
                reason=held.hold.reason,
                until=held.hold.until,
                payer=self.charge.payer,
                agent_id=self.charge.agent_id,
            )
        )
        while hold is not None and hold.kind is HoldKind.WAIT:
            if self.handle.held != hold.reason:
                await self.progress(f"held: {hold.reason}", state=ProgressState.WAITING)
            self.handle.held = hold.reason
            woken = self.handle.spend_woken(self.deps.clock, RECHECK_S)
            await self.handle.inflight_op(woken, cut_safely=True)
            hold = await self.guard.ask(self.model, held.estimate)
            if hold is not None:
                self.handle.spend_approved_by = None  # that approval is not enough
        self.handle.held = None
        if hold is not None:  # it ends the turn (at once, or after a reload said so)
            return EndTurn(RunStatus.STOPPED, hold.reason)
        await self._emit(SpendReleased(by=self.handle.spend_approved_by))
        await self.checkpoint(Boundary.BEFORE_PROVIDER_REQUEST)  # what came meanwhile
        self._announced_round = self.rounds - 1  # "thinking" again, after "held"
        request = self._request()
        return CallModel(request, request_chars(request))

    async def _call_model(self, request: ProviderRequest, chars: int) -> NextStep:
        """The round's model call, its answer recorded: a final answer, tools or more."""
        round_no = self.rounds
        if round_no > self._announced_round:
            await self.progress(thinking_step(round_no))
            self._announced_round = round_no
        response = await self._send_fitted(request, chars)
        step, recorded = resolve_round(response)
        repeated = self.transcript.repeated_tool_ids(recorded)  # such a round fails
        said = None
        if not repeated and recorded.says_anything():
            said = words_of(recorded, round_no)
        await self._settle(response, recorded, said)
        if repeated:
            raise ProviderError(
                f"the model returned duplicate tool_use ids: {repeated}", failure=Failure.INVALID
            )
        self.guard.answered(response.usage, recorded.tool_uses())
        return step

    async def _send_fitted(self, request: ProviderRequest, chars: int) -> ProviderResponse:
        """Send the request, compacted first when it would fill too much of the window."""
        fitted = await self._fit(request, self.rounds, self.session.context.estimate(chars))
        try:
            return await self._send(fitted, chars if fitted is request else None)
        except ContextWindowExceededError as exc:
            # The estimate fell short of the provider's count: learn from its count,
            # compact, and send once more if that made the request smaller.
            if exc.request_tokens:
                self.session.context.counted(fitted, exc.request_tokens)
            oldest = self.transcript.row_ids[:1]
            request = await self._fit(self._request(), self.rounds, force=True)
            if self.transcript.row_ids[:1] == oldest:
                raise
            return await self._send(request)

    async def _run_tools(self, calls: list[ToolUseBlock]) -> tuple[list[ToolResult], bool]:
        """The round's tool calls run between their two safe points: their results, and
        whether an operator message was admitted at either (the model reads both with the
        results, so a round that set a wake-up goes on to answer them)."""
        before = bool(await self.checkpoint(Boundary.BEFORE_TOOL_EXECUTION))
        self.tool_runner.admitted_before_tools = before
        self.handle.raise_if_stopped()
        results = await self.tool_runner.run(calls, self.rounds)
        self._announced_round = self.rounds + 1
        after = bool(await self.checkpoint(Boundary.AFTER_TOOL_RESULTS))
        return results, before or after

    def _request(self) -> ProviderRequest:
        return ProviderRequest(
            model=self.model,
            system=self.agent.system_prompt,
            messages=self.memory.noted(self.transcript.rows, self.transcript.sources),
            tools=self.deps.tools.specs(self.agent.offered_tools),
            max_tokens=self.deps.budget.max_tokens,
            summary=self.transcript.summary,
            files=self.transcript.files,
            history=self.session.prepared,
        )

    async def _fit(
        self,
        request: ProviderRequest,
        round_no: int,
        tokens: int | None = None,
        *,
        force: bool = False,
    ) -> ProviderRequest:
        """The compaction step: when the request would fill too much of the context window
        (or the operator asked, with /compact), the older rows become a summary first, after
        an agent that keeps memory was asked to keep what should last of them (a flush).
        Operator messages drain around it, as at any safe point. `tokens`: the request's
        estimate, when the round has made it already."""
        if tokens is None:
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
            bill=self._bill(CallPurpose.COMPACTION),
            flush=MemoryFlush.of(
                self.tool_runner.memory or self.memory,
                self.deps,
                self.agent.system_prompt,
                self.handle.inflight_op,
                self._bill(CallPurpose.MEMORY_FLUSH),
            ),
        )
        if compacted is not None:
            self.usage += compacted.usage
        await self.checkpoint(Boundary.AFTER_COMPACTION)
        await self.progress(thinking_step(round_no))
        return self._request()

    async def _send(self, request: ProviderRequest, chars: int | None = None) -> ProviderResponse:
        live = LiveAnswer(self.deps.store, self.session.id, self.run_id, self._emit)
        response = await self.handle.inflight_op(
            self.deps.provider.complete(request, live.text, live.retry), cut_safely=True
        )
        self.session.context.observe(request, response.usage, chars)
        self.usage += response.usage
        return response

    async def _settle(
        self, response: ProviderResponse, row: TranscriptMessage, said: AssistantText | None
    ) -> None:
        """What the round cost and (when it said anything) its row, in one transaction: a
        call is counted once, with what it answered, or not at all."""
        async with self.deps.store.write() as w:
            bill = self._bill(CallPurpose.ROUND)
            bill(w, response.model or self.model, response.provider, response.usage)
            self.deps.gate.settled(w, self.charge)  # its reservation, replaced by its usage
            if said is not None:
                row_id = w.append_transcript(self.session.id, self.run_id, row)
                w.emit(Event(said, self.session.id, self.run_id))
        if said is not None:
            self.transcript.append(row, row_id)

    def _bill(self, purpose: CallPurpose) -> Bill:
        return bill_of(self.deps.prices, self.charge, purpose)

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

    # -- helpers -----------------------------------------------------------------------

    def _progress_event(self, step: str, *, state: ProgressState = ProgressState.RUNNING) -> Event:
        progress = self.handle.progress(self.deps.clock.monotonic(), state, step)
        return Event(progress, self.session.id, self.run_id)

    async def progress(self, step: str, *, state: ProgressState = ProgressState.RUNNING) -> None:
        await self.deps.store.emit(self._progress_event(step, state=state))

    async def _emit(self, payload: Payload) -> None:
        await self.deps.store.emit(Event(payload, self.session.id, self.run_id))
