"""A session's messages as last lowered for a provider (the Messages API's, and OpenAI's
Chat Completions'), kept between its rounds (`History`): a round normalizes, checks and
lowers only the messages its new rows changed.

The rows are normalized by the same fold as `transcript.normalize` (blank text dropped,
same-role rows merged, tool results first), which only ever changes its last message: so
the messages before the one the first new row went into stay as they were, checked and
lowered. What is kept is used only where it must come out the same as lowering the whole
request: rows that are the same objects, the same summary, every tool-call id sent as it is
in the provider's shape (a digest that stands in for an id depends on every id of the
request: then the whole request is lowered), and no file that was missing when its message
was lowered.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from runtime.errors import TranscriptInvariantError
from runtime.providers import tool_ids
from runtime.providers.history import History, same_prefix
from runtime.transcript import (
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    TranscriptMessage,
    check_invariants,
)

KEY = "anthropic"
Lower = Callable[[int, TranscriptMessage], Any]  # a message, by its index


@dataclass(slots=True)
class EncodedPrefix:
    """The messages before a request's last, as its body sends them: their JSON, comma-joined,
    and where each one ends. Grown and cut in place, so a round copies what it adds, not all."""

    joined: bytearray = field(default_factory=bytearray)
    ends: list[int] = field(default_factory=list)  # per message: the end of its bytes

    def keep(self, count: int) -> None:
        """Only the first `count` messages."""
        if count < len(self.ends):
            del self.joined[self.ends[count - 1] if count else 0 :]
            del self.ends[count:]

    def add(self, encoded: bytes) -> None:
        """One more message, after those held."""
        if self.ends:
            self.joined += b","
        self.joined += encoded
        self.ends.append(len(self.joined))


@dataclass(slots=True)
class Lowered:
    """The rows of a request (after its summary's opening row) and what they became."""

    summary: str
    rows: list[TranscriptMessage] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)  # per row: its message's index, -1: none
    messages: list[TranscriptMessage] = field(default_factory=list)  # normalized
    firsts: list[int] = field(default_factory=list)  # per message: the row it began with
    first_use: dict[str, int] = field(default_factory=dict)  # tool_use id -> its message
    uses: list[list[str]] = field(default_factory=list)  # per message: its tool_use ids
    lowered: list[Any] = field(default_factory=list)  # each message as sent (Anthropic's: less
    # the last's breakpoint; the summary's is in)
    missing: int | None = None  # the first message lowered without a file's bytes
    start: int = 0  # the first message lowered for this request (those before were kept)
    encoded: EncodedPrefix = field(default_factory=EncodedPrefix)  # the messages before the last


class _Before:
    """The tool_use ids of the messages before `start`."""

    __slots__ = ("first_use", "start")

    def __init__(self, first_use: Mapping[str, int], start: int) -> None:
        self.first_use = first_use
        self.start = start

    def __contains__(self, tool_id: object) -> bool:
        return isinstance(tool_id, str) and self.first_use.get(tool_id, self.start) < self.start


def kept_for(history: History | None, summary: str, key: object = KEY) -> Lowered | None:
    kept = history.kept.get(key) if history is not None else None
    return kept if isinstance(kept, Lowered) and kept.summary == summary else None


def missing_files(files: Mapping[str, bytes]) -> Callable[[TranscriptMessage], bool]:
    """Whether a message refers to a file whose bytes `files` does not hold."""
    return lambda message: any(a.id not in files for a in message.attachments())


def lowered_messages(
    rows: list[TranscriptMessage],
    summary: str,
    kept: Lowered,
    lower: Lower,
    missing: Callable[[TranscriptMessage], bool],
    shape: tool_ids.IdShape = tool_ids.ANTHROPIC,
) -> Lowered | None:
    """`rows` (the opening row first, when there is a summary) normalized, checked and
    lowered, reusing what `kept` holds for the same rows. None when an id is not sent as it
    is (the whole request must be lowered). Raises TranscriptInvariantError as the check of
    the whole request would, with its problems."""
    same = same_prefix(kept.rows, rows)
    if same == len(rows) == len(kept.rows):
        return kept
    start, row = 0, 0  # the first message to make again, and the row it begins with
    if same:
        end = kept.ends[same - 1]
        if end >= 0:
            start, row = end, kept.firsts[end]
    if kept.missing is not None and kept.missing < start:
        start, row = kept.missing, kept.firsts[kept.missing]
    new = Lowered(summary, list(rows), kept.ends[:row], kept.messages[:start], kept.firsts[:start])
    new.first_use = kept.first_use  # the caller drops `kept`
    for uses in kept.uses[start:]:
        for tool_id in uses:
            if new.first_use.get(tool_id, -1) >= start:
                del new.first_use[tool_id]
    new.uses = kept.uses[:start]
    _fold(new, rows, row)
    check_from = max(0, start - 1)
    if check_invariants(new.messages, check_from, _Before(new.first_use, check_from)):
        raise TranscriptInvariantError(check_invariants(new.messages))
    for index in range(start, len(new.messages)):
        uses = []
        for block in new.messages[index].blocks:
            if isinstance(block, ToolUseBlock):
                uses.append(block.id)
                new.first_use.setdefault(block.id, index)
            if isinstance(block, (ToolUseBlock, ToolResultBlock)):
                tool_id = block.id if isinstance(block, ToolUseBlock) else block.tool_use_id
                if not shape.fits(tool_id):
                    return None
        new.uses.append(uses)
    new.lowered = kept.lowered[:start]
    new.start, new.encoded = start, kept.encoded
    new.missing = kept.missing if kept.missing is not None and kept.missing < start else None
    for index in range(start, len(new.messages)):
        new.lowered.append(lower(index, new.messages[index]))
        if new.missing is None and missing(new.messages[index]):
            new.missing = index
    return new


def _fold(new: Lowered, rows: list[TranscriptMessage], row: int) -> None:
    """`transcript.normalize`, from `row` on, onto the messages `new` holds (those that rows
    before `row` made)."""
    merged, firsts = new.messages, new.firsts
    for index in range(row, len(rows)):
        message = rows[index]
        blocks = [
            b for b in message.blocks if not (isinstance(b, TextBlock) and not b.text.strip())
        ]
        if blocks:
            if merged and merged[-1].role == message.role:
                blocks = merged.pop().blocks + blocks
            else:
                firsts.append(index)
            if message.role == "user":
                results = [b for b in blocks if isinstance(b, ToolResultBlock)]
                blocks = results + [b for b in blocks if not isinstance(b, ToolResultBlock)]
            merged.append(TranscriptMessage(role=message.role, blocks=blocks))
        new.ends.append(len(merged) - 1)
