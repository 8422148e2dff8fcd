"""What each step of a turn resolves to: the closed set of next steps the turn loop matches
on (after openai-agents' NextStep types), and the pure functions that resolve a model round
and a tool round into one.

A turn goes NextRound -> CallModel (or HoldForBudget, then CallModel) -> FinalAnswer,
RunTools or ContinueRound -> ... until it ends: a final answer nobody interjected after, a
wake-up set (EndForWakeup), or a limit (EndTurn). A round a restart left open for an
operator's approval is closed first (WaitForApproval)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from runtime.payloads import AssistantText
from runtime.providers.base import ProviderRequest, ProviderResponse, StopReason, Usage
from runtime.records import ApprovalRecord, RunStatus
from runtime.spend import SpendHold
from runtime.tools.builtins import ScheduleWakeup
from runtime.tools.envelope import ToolResult
from runtime.transcript import TextBlock, ToolUseBlock, TranscriptMessage

REFUSAL_TEXT = "The model declined to answer this request."
TRUNCATED_NOTE = "[The answer was cut off at the model's output limit.]"


@dataclass(frozen=True, slots=True)
class WaitForApproval:
    """The transcript ends in a round a restart left open while a call of it waited for an
    operator's approval: ask again, wait, and close the round before the first model call."""

    calls: list[ToolUseBlock]  # the round's unanswered calls
    asked: Mapping[str, ApprovalRecord]  # the approvals asked of them, by tool_use id


@dataclass(frozen=True, slots=True)
class NextRound:
    """Ask the model (again): round 1, or after tool results, an interjection or a pause."""


@dataclass(frozen=True, slots=True)
class HoldForBudget:
    """The spend gate held the round's model call: the turn waits (or ends) as it says."""

    hold: SpendHold
    estimate: Usage  # of the call held, asked again after each wake-up


@dataclass(frozen=True, slots=True)
class CallModel:
    """The round's request, let through by the guards and the gate."""

    request: ProviderRequest
    chars: int  # its size, counted once a round (it walks the whole transcript)


@dataclass(frozen=True, slots=True)
class FinalAnswer:
    text: str


@dataclass(frozen=True, slots=True)
class RunTools:
    calls: list[ToolUseBlock]
    text: str = ""  # what the round said beside its calls


@dataclass(frozen=True, slots=True)
class ContinueRound:
    """The provider paused (pause_turn): send the transcript back for it to go on."""


@dataclass(frozen=True, slots=True)
class EndForWakeup:
    """A wake-up was set in the round and no operator message came meanwhile: the turn
    ends now and picks up when the wake-up fires."""

    text: str


@dataclass(frozen=True, slots=True)
class EndTurn:
    """The turn ends without an answer: a runaway guard, a budget that ends it, or its
    rounds used up. `status`: stopped (a budget) or failed."""

    status: RunStatus
    reason: str


NextStep = (
    WaitForApproval
    | NextRound
    | HoldForBudget
    | CallModel
    | FinalAnswer
    | RunTools
    | ContinueRound
    | EndForWakeup
    | EndTurn
)


def resolve_round(response: ProviderResponse) -> tuple[NextStep, TranscriptMessage]:
    """What comes after this round, and the assistant message to record for it."""
    text = response.text()
    calls = response.tool_uses()
    match response.stop_reason:
        case StopReason.MAX_TOKENS:
            # Tool calls cut off mid-way are incomplete: keep only the text.
            final = f"{text}\n\n{TRUNCATED_NOTE}".strip()
            return FinalAnswer(final), TranscriptMessage(
                role="assistant", blocks=[TextBlock(text=text)]
            )
        case StopReason.REFUSAL:
            return FinalAnswer(text or REFUSAL_TEXT), TranscriptMessage(
                role="assistant", blocks=[TextBlock(text=text)]
            )
        case StopReason.PAUSE_TURN:
            paused = TranscriptMessage(role="assistant", blocks=list(response.blocks))
            return ContinueRound(), paused
    recorded = TranscriptMessage(role="assistant", blocks=list(response.blocks))
    return (RunTools(calls, recorded.text()) if calls else FinalAnswer(text)), recorded


def resolve_tools(
    step: RunTools, results: Sequence[ToolResult], admitted: bool
) -> NextRound | EndForWakeup:
    """What comes after a tool round: another model round, or the turn's end when a call
    set a wake-up (schedule_wakeup says so in its result) and no operator message was
    admitted before or after the tools ran (the model has read neither: it answers first)."""
    ending = [r for r in results if r.ends_turn]
    if ending and not admitted:
        return EndForWakeup(step.text.strip() or ending[0].summary_text)
    return NextRound()


def words_of(recorded: TranscriptMessage, round_no: int) -> AssistantText:
    """What the model said in a round, for the ledger: with tool calls, words said while it
    works, unless a call sets a wake-up (then, once it is set, they are the turn's answer)."""
    uses = recorded.tool_uses()
    wakeup = any(u.name == ScheduleWakeup.spec.name for u in uses)
    return AssistantText(text=recorded.text(), round=round_no, tool_calls=len(uses), wakeup=wakeup)
