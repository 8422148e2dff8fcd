"""How much of the model's context window a request takes, before it is sent.

A request's size is estimated from its characters (about four to a token for English text
and code) and calibrated against the provider's own count on each answer, so the estimate
follows the real tokenizer within a round or two. The window comes from the settings,
else from the provider once at start (the Models API's `max_input_tokens`), else, when it
cannot tell, from the model's name.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Protocol, runtime_checkable

from runtime.providers.base import ProviderRequest, Usage, blocks_chars, request_chars
from runtime.transcript import TranscriptMessage

CHARS_PER_TOKEN = 4.0
# What calibration may conclude: from 10 characters a token (long words, a generous
# tokenizer) to one (CJK text): a count outside means the count is wrong, not the text.
TOKENS_PER_CHAR = (0.1, 1.0)
DEFAULT_WINDOW = 200_000
# By a part of the model's name (Bedrock's `us.anthropic.claude-...`, Vertex's `claude-...@date`,
# OpenRouter's `openai/gpt-4.1`): when the provider cannot tell.
KNOWN_WINDOWS = {
    "claude-": 200_000,
    "gpt-4.1": 1_047_576,
    "gpt-4o": 128_000,
    "gpt-5": 400_000,
    "o3": 200_000,
    "o4-mini": 200_000,
}


def window_of(model: str, configured: int | None) -> int:
    if configured:
        return configured
    name = model.rpartition("/")[2]  # OpenRouter's vendor prefix
    name = name[name.find("claude-") :] if "claude-" in name else name  # Bedrock's region.vendor.
    return next(
        (w for prefix, w in KNOWN_WINDOWS.items() if name.startswith(prefix)), DEFAULT_WINDOW
    )


@runtime_checkable
class KnowsWindow(Protocol):
    """A provider that can tell its model's context window (Anthropic: the Models API)."""

    async def context_window(self) -> int | None: ...


async def learned_budget(budget: Budget, provider: object, configured: int | None) -> Budget:
    """`budget` with the window the provider tells, asked once at start; the configured
    window wins, and when the provider cannot tell, the table's stays."""
    if configured or not isinstance(provider, KnowsWindow):
        return budget
    window = await provider.context_window()
    return replace(budget, window=window) if window else budget


def rows_chars(rows: list[TranscriptMessage]) -> int:
    return blocks_chars(b for row in rows for b in row.blocks)


@dataclass(slots=True)
class ContextUse:
    """A session's context, as last measured: kept in memory, calibrated by every answer."""

    tokens_per_char: float = 1 / CHARS_PER_TOKEN
    last_request_tokens: int | None = None  # as the provider counted it

    def estimate(self, chars: int) -> int:
        return math.ceil(chars * self.tokens_per_char)

    def observe(self, request: ProviderRequest, usage: Usage, chars: int | None = None) -> None:
        """The provider answered this request: calibrate on its count. `chars`: the request's
        characters, when the caller has counted them."""
        self.counted(request, usage.request_tokens, chars)

    def counted(self, request: ProviderRequest, counted: int, chars: int | None = None) -> None:
        """The provider counted this request `counted` tokens: calibrate, remember its size."""
        chars = request_chars(request) if chars is None else chars
        if counted <= 0 or chars <= 0:
            return
        self.last_request_tokens = counted
        low, high = TOKENS_PER_CHAR
        measured = min(high, max(low, counted / chars))
        self.tokens_per_char = (self.tokens_per_char + measured) / 2  # smoothed


@dataclass(frozen=True, slots=True)
class Budget:
    """When a session's request is too large, and how much of it compaction keeps."""

    window: int
    max_tokens: int
    compact_at: float  # of the room left for input once the answer's max_tokens is kept
    keep_recent: float  # of that room, for the rows kept verbatim

    @property
    def room(self) -> int:
        return max(1, self.window - self.max_tokens)

    def needs_compaction(self, tokens: int) -> bool:
        return tokens > self.compact_at * self.room

    @property
    def keep_tokens(self) -> int:
        return int(self.keep_recent * self.room)
