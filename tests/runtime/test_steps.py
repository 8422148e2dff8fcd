"""A turn's next steps: what a tool round resolves to, the guard answering with a step
(never waiting itself), and the turn loop's one `match` handling every step of the union."""

from __future__ import annotations

import ast
import asyncio
import inspect
import textwrap
import typing

from runtime.guards import CallGuard, TurnLimits
from runtime.providers.base import Usage
from runtime.records import RunStatus
from runtime.session import RunHandle
from runtime.spend import Charge, HoldKind, NoLimits, PlannedCall, SpendHold
from runtime.steps import (
    EndForWakeup,
    EndTurn,
    HoldForBudget,
    NextRound,
    NextStep,
    RunTools,
    resolve_tools,
)
from runtime.tools.envelope import ToolResult
from runtime.transcript import ToolUseBlock
from runtime.turn import Turn

WAKEUP_SET = ToolResult.success("wake-up set for 10:00; this turn ends now").model_copy(
    update={"ends_turn": True}
)
CALLS = [ToolUseBlock(id="toolu_1", name="schedule_wakeup", input={"when": "1h", "note": "x"})]


def test_a_wakeup_set_ends_the_turn_with_what_the_round_said() -> None:
    step = RunTools(CALLS, "  I will look again in an hour.  ")
    assert resolve_tools(step, [WAKEUP_SET], admitted=False) == EndForWakeup(
        "I will look again in an hour."
    )


def test_a_wakeup_set_by_a_silent_round_ends_the_turn_with_the_tools_words() -> None:
    step = RunTools(CALLS, "")
    assert resolve_tools(step, [ToolResult.success("slept 1s"), WAKEUP_SET], False) == (
        EndForWakeup("wake-up set for 10:00; this turn ends now")
    )


def test_an_operator_message_after_the_results_is_answered_before_the_turn_ends() -> None:
    assert resolve_tools(RunTools(CALLS, "later"), [WAKEUP_SET], admitted=True) == NextRound()


def test_a_round_without_a_wakeup_asks_the_model_again() -> None:
    refused = ToolResult.failure("too_soon", "sooner than the floor")
    assert resolve_tools(RunTools(CALLS, "later"), [refused], admitted=False) == NextRound()


HOLD = SpendHold(HoldKind.WAIT, "the budget is spent", "workspace/day", None)


class HoldingGate(NoLimits):
    def __init__(self) -> None:
        self.asked: list[PlannedCall] = []

    async def before_call(self, call: PlannedCall) -> SpendHold | None:
        self.asked.append(call)
        return HOLD


def guard(gate: NoLimits, limits: TurnLimits | None = None) -> CallGuard:
    handle = RunHandle(run_id="run_1", started_at=0.0, message_ids=[])
    charge = Charge("ses_1", "assistant", "alice", "run_1")
    return CallGuard(gate, limits or TurnLimits(), handle, charge)


async def test_a_budget_hold_is_a_step_the_guard_returns_without_waiting() -> None:
    gate = HoldingGate()
    # the hold's wait belongs to the loop's handling of the step: the guard answers at once
    step = await asyncio.wait_for(guard(gate).before_call("m", Usage(), 1_000, 4_000), 5)
    assert step == HoldForBudget(HOLD, Usage(input_tokens=1_000, output_tokens=500))
    assert len(gate.asked) == 1


async def test_a_tripped_guard_is_a_step_that_ends_the_turn_as_failed() -> None:
    capped = guard(NoLimits(), TurnLimits(max_turn_tokens=1_000))
    step = await capped.before_call("m", Usage(input_tokens=400), 400, 4_000)
    assert isinstance(step, EndTurn) and step.status is RunStatus.FAILED
    assert "max_turn_tokens" in step.reason
    assert await guard(NoLimits()).before_call("m", Usage(), 400, 4_000) is None


def test_the_turn_loop_matches_every_next_step_in_one_match() -> None:
    tree = ast.parse(textwrap.dedent(inspect.getsource(Turn._loop)))
    [match] = [node for node in ast.walk(tree) if isinstance(node, ast.Match)]
    handled = {
        cls.id
        for case in match.cases
        for pattern in ast.walk(case.pattern)
        if isinstance(pattern, ast.MatchClass) and isinstance(cls := pattern.cls, ast.Name)
    }
    assert handled == {step.__name__ for step in typing.get_args(NextStep)}
    last = match.cases[-1]
    assert isinstance(last.pattern, ast.MatchAs) and last.pattern.pattern is None
    assert isinstance(last.body[0], ast.Raise), "an unknown step raises"
