"""What a provider round resolves to: the closed set of next steps the turn loop matches on
(after openai-agents' NextStep types), and the assistant message to record for it."""

from __future__ import annotations

from dataclasses import dataclass

from runtime.providers.base import ProviderResponse, StopReason
from runtime.transcript import TextBlock, ToolUseBlock, TranscriptMessage

REFUSAL_TEXT = "The model declined to answer this request."
TRUNCATED_NOTE = "[The answer was cut off at the model's output limit.]"


@dataclass(frozen=True, slots=True)
class FinalAnswer:
    text: str


@dataclass(frozen=True, slots=True)
class RunTools:
    calls: list[ToolUseBlock]


@dataclass(frozen=True, slots=True)
class ContinueRound:
    """The provider paused (pause_turn): send the transcript back for it to go on."""


NextStep = FinalAnswer | RunTools | ContinueRound


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
    return (RunTools(calls) if calls else FinalAnswer(text)), recorded
