"""What is checked before each model call of a turn: the runaway guards (tokens per turn, the
same tool called with the same input again and again), then the spend gate. A guard ends the
turn saying why; a budget holds it (`HoldForBudget`, a step the turn loop waits out) until an
operator approves the spend, the limit is raised or its period ends (`SpendGate`,
runtime/spend.py)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from runtime.providers.base import Usage
from runtime.records import RunStatus
from runtime.session import Elsewhere, RunHandle, Session
from runtime.spend import Charge, PlannedCall, SpendGate, SpendHold
from runtime.steps import EndTurn, HoldForBudget
from runtime.transcript import ToolUseBlock

ANSWER_FLOOR = 500  # tokens an answer is estimated at, before the turn has had one

LOOPING = (
    "it called `{tool}` with the same input {times} times, so it was stopped in case it is "
    "looping (the limit is max_repeated_calls in [provider])"
)
TOO_MANY_TOKENS = (
    "it has used {used:,} tokens, and its next model call would pass the {limit:,} a turn may "
    "use (max_turn_tokens in [provider])"
)


@dataclass(frozen=True, slots=True)
class TurnLimits:
    max_turn_tokens: int = 5_000_000
    max_repeated_calls: int = 10


class CallGuard:
    """One turn's guard: `before_call` says whether the next call may be made now."""

    def __init__(
        self, gate: SpendGate, limits: TurnLimits, handle: RunHandle, charge: Charge
    ) -> None:
        self._gate = gate
        self._limits = limits
        self._handle = handle
        self._charge = charge
        self._calls: Counter[tuple[str, str]] = Counter()
        self.largest_answer = 0
        self._approvals = 0  # approvals seen: each lets the turn spend a bounded step more
        self._planned = (Usage(), 0, 0)  # the last call asked for: used, request, max tokens

    def answered(self, usage: Usage, calls: Sequence[ToolUseBlock]) -> None:
        """A round came back: its answer's size, and the tool calls it made (a call made
        twice in one round counts once: a loop is the same call round after round)."""
        self.largest_answer = max(self.largest_answer, usage.output_tokens)
        self._calls.update({(c.name, json.dumps(c.input, sort_keys=True)) for c in calls})

    async def before_call(
        self, model: str, used: Usage, request_tokens: int, max_tokens: int
    ) -> EndTurn | HoldForBudget | None:
        """None: the call may be made (the gate reserved its estimate). `EndTurn` when a
        guard trips (the turn fails saying why); `HoldForBudget` when a budget holds it."""
        most = self._limits.max_repeated_calls
        looping = [(name, n) for (name, _), n in self._calls.items() if n >= most]
        if looping:
            reason = LOOPING.format(tool=looping[0][0], times=looping[0][1])
            return EndTurn(RunStatus.FAILED, reason)
        self._planned = (used, request_tokens, max_tokens)
        answer = min(max_tokens, max(self.largest_answer, ANSWER_FLOOR))
        estimate = Usage(input_tokens=request_tokens, output_tokens=answer)
        spent = used.request_tokens + used.output_tokens
        if spent + request_tokens + answer > self._limits.max_turn_tokens:
            limit = self._limits.max_turn_tokens
            return EndTurn(RunStatus.FAILED, TOO_MANY_TOKENS.format(used=spent, limit=limit))
        hold = await self.ask(model, estimate)
        return None if hold is None else HoldForBudget(hold, estimate)

    async def allows(self, model: str) -> bool:
        """Whether the call just let through may go to `model` instead (a fallback's): the
        gate reserves its estimate at that model's price, replacing the reservation made for
        the model it stands in for; held, the call is not made (the budget refused it)."""
        return await self.before_call(model, *self._planned) is None

    async def ask(self, model: str, estimate: Usage) -> SpendHold | None:
        """The gate's answer for a call of `estimate` (again, for a held turn woken up)."""
        self._handle.spend_wake.clear()  # what wakes the turn from here on is news
        approved = self._handle.spend_approved_by is not None
        if approved and self._handle.held is not None:
            self._approvals += 1  # a new approval of the turn held
        call = PlannedCall(self._charge, model, estimate, approved, self._approvals)
        return await self._gate.before_call(call)


class HeldTurns:
    """The turns a budget holds: one let go by an operator (/approve-spend), or all of them
    asked to check again (a reload changed the limits). A turn running on another replica
    (`Session.elsewhere`) is let go there (`elsewhere`)."""

    def __init__(self, sessions: Mapping[str, Session]) -> None:
        self._sessions = sessions
        # replicas: asks the replica running the session (`Homes.start` sets it)
        self.elsewhere: Callable[[str, str], None] = lambda session_id, by: None

    def of(self, session_id: str) -> RunHandle | Elsewhere | None:
        session = self._sessions.get(session_id)
        run = (session.running or session.elsewhere) if session else None
        return run if run is not None and run.held is not None else None

    def session_of(self, run_id: str) -> str | None:
        """The session whose held turn is `run_id`."""
        return next(
            (s for s in self._sessions if (run := self.of(s)) and run.run_id == run_id), None
        )

    def approve(self, session_id: str, by: str) -> RunHandle | Elsewhere | None:
        """Let the session's held turn go on past its budgets; None: no turn of it is held."""
        run = self.of(session_id)
        if isinstance(run, RunHandle):
            run.approve_spend(by)
        elif run is not None:
            self.elsewhere(session_id, by)
        return run

    def recheck(self) -> None:
        for session in self._sessions.values():
            if session.running is not None and session.running.held is not None:
                session.running.spend_wake.set()
