"""What is checked before each model call of a turn: the runaway guards (tokens per turn, the
same tool called with the same input again and again), then the spend gate. A guard ends the
turn saying why; a budget holds it, waiting, until an operator approves the spend, the limit
is raised or its period ends (`SpendGate`, runtime/spend.py)."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass

from runtime.clock import Clock
from runtime.events import Payload
from runtime.payloads import SpendHeld, SpendReleased
from runtime.providers.base import Usage
from runtime.session import RunHandle, Session
from runtime.spend import Charge, HoldKind, PlannedCall, SpendGate, SpendHold
from runtime.transcript import ToolUseBlock

RECHECK_S = 60.0  # a held turn asks the gate again this often (a period may have ended)
ANSWER_FLOOR = 500  # tokens an answer is estimated at, before the turn has had one

LOOPING = (
    "it called `{tool}` with the same input {times} times, so it was stopped in case it is "
    "looping (the limit is max_repeated_calls in [provider])"
)
TOO_MANY_TOKENS = (
    "it has used {used:,} tokens, and its next model call would pass the {limit:,} a turn may "
    "use (max_turn_tokens in [provider])"
)


class TurnEnded(Exception):
    """A guard or a budget ends the turn; the message says why, in the operator's words.
    `stopped`: it ends as a stop does (a budget), not as a failure (a runaway)."""

    def __init__(self, message: str, *, stopped: bool = False) -> None:
        super().__init__(message)
        self.stopped = stopped


@dataclass(frozen=True, slots=True)
class TurnLimits:
    max_turn_tokens: int = 5_000_000
    max_repeated_calls: int = 10


class CallGuard:
    """One turn's guard; `before_call` returns once the next call may be made."""

    def __init__(
        self,
        gate: SpendGate,
        limits: TurnLimits,
        clock: Clock,
        handle: RunHandle,
        charge: Charge,
        emit: Callable[[Payload], Awaitable[None]],
        waiting: Callable[[str], Awaitable[None]],
    ) -> None:
        self._gate = gate
        self._limits = limits
        self._clock = clock
        self._handle = handle
        self._charge = charge
        self._emit = emit
        self._waiting = waiting  # shows the turn's step while it waits
        self._calls: Counter[tuple[str, str]] = Counter()
        self.largest_answer = 0
        self._approvals = 0  # approvals seen: each lets the turn spend a bounded step more

    def answered(self, usage: Usage, calls: Sequence[ToolUseBlock]) -> None:
        """A round came back: its answer's size, and the tool calls it made (a call made
        twice in one round counts once: a loop is the same call round after round)."""
        self.largest_answer = max(self.largest_answer, usage.output_tokens)
        self._calls.update({(c.name, json.dumps(c.input, sort_keys=True)) for c in calls})

    async def before_call(
        self, model: str, used: Usage, request_tokens: int, max_tokens: int
    ) -> bool:
        """Raises `TurnEnded` when a guard trips; waits while a budget holds the turn. True
        when it waited (operators' messages may have come meanwhile)."""
        most = self._limits.max_repeated_calls
        looping = [(name, n) for (name, _), n in self._calls.items() if n >= most]
        if looping:
            raise TurnEnded(LOOPING.format(tool=looping[0][0], times=looping[0][1]))
        answer = min(max_tokens, max(self.largest_answer, ANSWER_FLOOR))
        estimate = Usage(input_tokens=request_tokens, output_tokens=answer)
        spent = used.request_tokens + used.output_tokens
        if spent + request_tokens + answer > self._limits.max_turn_tokens:
            raise TurnEnded(TOO_MANY_TOKENS.format(used=spent, limit=self._limits.max_turn_tokens))
        hold = await self._ask(model, estimate)
        if hold is None:
            return False
        # Held again after an approval: its step is spent, and only a new approval goes on.
        self._handle.spend_approved_by = None
        await self._emit(
            SpendHeld(
                kind=hold.kind,
                budget=hold.budget,
                reason=hold.reason,
                until=hold.until,
                payer=self._charge.payer,
                agent_id=self._charge.agent_id,
            )
        )
        while hold is not None and hold.kind is HoldKind.WAIT:
            if self._handle.held != hold.reason:
                await self._waiting(f"held: {hold.reason}")
            self._handle.held = hold.reason
            await self._handle.inflight_op(self._wait())
            hold = await self._ask(model, estimate)
            if hold is not None:
                self._handle.spend_approved_by = None  # that approval is not enough
        self._handle.held = None
        if hold is not None:  # it ends the turn (at once, or after a reload said so)
            raise TurnEnded(hold.reason, stopped=True)
        await self._emit(SpendReleased(by=self._handle.spend_approved_by))
        return True

    async def _ask(self, model: str, estimate: Usage) -> SpendHold | None:
        self._handle.spend_wake.clear()  # what wakes the turn from here on is news
        approved = self._handle.spend_approved_by is not None
        if approved and self._handle.held is not None:
            self._approvals += 1  # a new approval of the turn held
        call = PlannedCall(self._charge, model, estimate, approved, self._approvals)
        return await self._gate.before_call(call)

    async def _wait(self) -> None:
        """Until an approval or a recheck wakes the turn, or `RECHECK_S` passes."""
        woken = asyncio.ensure_future(self._handle.spend_wake.wait())
        slept = asyncio.ensure_future(self._clock.sleep(RECHECK_S))
        try:
            await asyncio.wait({woken, slept}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            woken.cancel()
            slept.cancel()


class HeldTurns:
    """The turns a budget holds: one let go by an operator (/approve-spend), or all of them
    asked to check again (a reload changed the limits)."""

    def __init__(self, sessions: Mapping[str, Session]) -> None:
        self._sessions = sessions

    def of(self, session_id: str) -> RunHandle | None:
        session = self._sessions.get(session_id)
        run = session.running if session else None
        return run if run is not None and run.held is not None else None

    def session_of(self, run_id: str) -> str | None:
        """The session whose held turn is `run_id`."""
        held = (s for s in self._sessions.values() if self.of(s.id) is not None)
        return next((s.id for s in held if s.running and s.running.run_id == run_id), None)

    def approve(self, session_id: str, by: str) -> RunHandle | None:
        """Let the session's held turn go on past its budgets; None: no turn of it is held."""
        run = self.of(session_id)
        if run is not None:
            run.approve_spend(by)
        return run

    def recheck(self) -> None:
        for session in self._sessions.values():
            if session.running is not None and session.running.held is not None:
                session.running.spend_wake.set()
