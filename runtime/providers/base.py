"""The provider interface: a neutral request in, a neutral response out."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

from runtime.tools.base import ToolSpec
from runtime.transcript import TextBlock, ToolUseBlock, TranscriptMessage


class StopReason(StrEnum):
    END_TURN = "end_turn"
    TOOL_USE = "tool_use"
    MAX_TOKENS = "max_tokens"
    PAUSE_TURN = "pause_turn"
    REFUSAL = "refusal"
    STOP_SEQUENCE = "stop_sequence"


@dataclass(frozen=True, slots=True)
class ProviderRequest:
    model: str
    system: str
    messages: list[TranscriptMessage]
    tools: list[ToolSpec]
    max_tokens: int


@dataclass(slots=True)
class ProviderResponse:
    blocks: list[TextBlock | ToolUseBlock]
    stop_reason: StopReason
    model: str
    usage: dict[str, int] = field(default_factory=dict)

    def text(self) -> str:
        return "".join(b.text for b in self.blocks if isinstance(b, TextBlock))

    def tool_uses(self) -> list[ToolUseBlock]:
        return [b for b in self.blocks if isinstance(b, ToolUseBlock)]


TextSink = Callable[[str], None]
RetryNotice = Callable[[int, float, str], None]


class Provider(Protocol):
    """A model. `complete` streams text to `on_text` as it arrives and returns the round."""

    model: str

    async def complete(
        self, request: ProviderRequest, on_text: TextSink, on_retry: RetryNotice
    ) -> ProviderResponse: ...

    async def close(self) -> None:
        """Release its connections; the runtime that was given it calls this on close."""
