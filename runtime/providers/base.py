"""The provider interface: a neutral request in, a neutral response out."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

from runtime.providers.history import History, same_prefix
from runtime.tools.base import ToolSpec
from runtime.transcript import (
    AttachmentBlock,
    AttachmentForm,
    Block,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    TranscriptMessage,
)

# What a file weighs in characters, for the estimate (calibrated like text afterwards): an
# image costs at most about 1,600 tokens once the API has scaled it; a PDF about a token for
# every 16 bytes (text and a picture of each page); a text file its characters.
IMAGE_CHARS = 6_400
PDF_BYTES_PER_CHAR = 4


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
    # The session's earlier conversation, compacted: sent before `messages`, in the first user
    # message, as part of the stable prefix a provider may cache.
    summary: str | None = None
    # The bytes of every attachment the messages refer to, by id (`AttachmentBlock.id`).
    files: Mapping[str, bytes] = field(default_factory=dict)
    # The session's history as its last request prepared it: only what is new is prepared.
    history: History | None = field(default=None, compare=False, repr=False)


def attachment_chars(block: AttachmentBlock) -> int:
    match block.form:
        case AttachmentForm.IMAGE:
            return IMAGE_CHARS
        case AttachmentForm.DOCUMENT:
            return block.size // PDF_BYTES_PER_CHAR
        case AttachmentForm.TEXT:
            return block.size


def blocks_chars(blocks: Iterable[Block]) -> int:
    """The characters a model reads of `blocks`: what a token estimate is made from."""
    total = 0
    for block in blocks:
        match block:
            case TextBlock(text=text):
                total += len(text)
            case ToolUseBlock(name=name, input=tool_input):
                total += len(name) + len(json.dumps(tool_input))
            case ToolResultBlock(content=content):
                total += len(content)
            case AttachmentBlock():
                total += len(block.describe()) + attachment_chars(block)
    return total


def request_chars(request: ProviderRequest) -> int:
    """The characters of everything `request` sends: system, tools, summary, messages."""
    tools = sum(t.chars for t in request.tools)
    rows = _rows_chars(request.messages, request.history)
    return len(request.system) + tools + len(request.summary or "") + rows


@dataclass(slots=True)
class _Counted:
    rows: list[TranscriptMessage]
    sums: list[int]  # sums[i]: the characters of rows[:i]


def _rows_chars(rows: list[TranscriptMessage], history: History | None) -> int:
    """The characters of `rows`, counting only those not counted for the last request."""
    if history is None:
        return blocks_chars(b for m in rows for b in m.blocks)
    counted = history.kept.get("chars")
    start = same_prefix(counted.rows, rows) if isinstance(counted, _Counted) else 0
    sums = counted.sums[: start + 1] if isinstance(counted, _Counted) else [0]
    for row in rows[start:]:
        sums.append(sums[-1] + blocks_chars(row.blocks))
    history.kept["chars"] = _Counted(list(rows), sums)
    return sums[-1]


@dataclass(frozen=True, slots=True)
class Usage:
    """What a round cost, in tokens, as the provider counted it."""

    input_tokens: int = 0  # not read from or written to a cache
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    @property
    def request_tokens(self) -> int:
        """The whole request's size, cached or not: what counts against the context window."""
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
        )


@dataclass(slots=True)
class ProviderResponse:
    blocks: list[TextBlock | ToolUseBlock]
    stop_reason: StopReason
    model: str
    usage: Usage = field(default_factory=Usage)
    # The connection that answered, by its config name (`default`, a `[providers.<name>]`
    # entry): what its usage is recorded under. None: a provider used without a config.
    provider: str | None = None

    def text(self) -> str:
        return "".join(b.text for b in self.blocks if isinstance(b, TextBlock))

    def tool_uses(self) -> list[ToolUseBlock]:
        return [b for b in self.blocks if isinstance(b, ToolUseBlock)]


TextSink = Callable[[str], None]
RetryNotice = Callable[[int, float, str], None]
# How a retry notice's reason begins when the call moves to the next provider of its agent's
# fallback (runtime/providers/fallback.py): the progress line says so.
FALLING_BACK = "falling back from "
DEFAULT_PROVIDER = "default"  # how usage names the runtime's own provider (config: [provider])


class Provider(Protocol):
    """A model. `complete` streams text to `on_text` as it arrives and returns the round."""

    @property
    def model(self) -> str:
        """The model the next call goes to."""
        ...

    async def complete(
        self, request: ProviderRequest, on_text: TextSink, on_retry: RetryNotice
    ) -> ProviderResponse: ...

    async def close(self) -> None:
        """Release its connections; the runtime that was given it calls this on close."""
