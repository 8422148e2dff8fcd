"""The provider-neutral transcript and its invariants (DESIGN §2).

Rows are stored as they happen; `normalize` merges them into the alternating form a
provider sees, and `check_invariants` is the last word before anything is sent.
"""

from __future__ import annotations

import bisect
from collections.abc import Container, Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, Field, TypeAdapter


class TextBlock(BaseModel):
    kind: Literal["text"] = "text"
    text: str


class ToolUseBlock(BaseModel):
    kind: Literal["tool_use"] = "tool_use"
    id: str
    name: str
    input: dict[str, Any] = Field(default_factory=dict)


class AttachmentForm(StrEnum):
    """How a file reaches the model: an image block, a (PDF) document block, or as text."""

    IMAGE = "image"
    DOCUMENT = "document"
    TEXT = "text"


class AttachmentBlock(BaseModel):
    """A file an operator sent, by reference: its bytes live in the store (`attachments`),
    and a provider request carries them (`ProviderRequest.files`) wherever the row goes."""

    kind: Literal["attachment"] = "attachment"
    id: str
    name: str
    media_type: str
    form: AttachmentForm
    size: int

    def describe(self) -> str:
        """One line a person (or a plain-text record) can read: name, type, size."""
        return f"{self.name} ({self.media_type}, {human_size(self.size)})"


class ToolResultBlock(BaseModel):
    kind: Literal["tool_result"] = "tool_result"
    tool_use_id: str
    content: str
    is_error: bool = False
    attachments: list[AttachmentBlock] = []  # pictures the tool returned, by reference


def human_size(size: int) -> str:
    if size < 1024:
        return f"{size} bytes"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1024 * 1024):.1f} MB"


Block = TextBlock | ToolUseBlock | ToolResultBlock | AttachmentBlock
Role = Literal["user", "assistant"]


class TranscriptMessage(BaseModel):
    role: Role
    blocks: list[Block]

    def text(self) -> str:
        return "\n".join(b.text for b in self.blocks if isinstance(b, TextBlock))

    def tool_uses(self) -> list[ToolUseBlock]:
        return [b for b in self.blocks if isinstance(b, ToolUseBlock)]

    def says_anything(self) -> bool:
        """Whether any block is more than blank text."""
        return any(not (isinstance(b, TextBlock) and not b.text.strip()) for b in self.blocks)

    def attachments(self) -> list[AttachmentBlock]:
        """Every file the row refers to, a tool result's pictures included."""
        found = []
        for b in self.blocks:
            if isinstance(b, AttachmentBlock):
                found.append(b)
            elif isinstance(b, ToolResultBlock):
                found.extend(b.attachments)
        return found


BLOCKS = TypeAdapter(list[Block])


def _is_blank_text(block: Block) -> bool:
    return isinstance(block, TextBlock) and not block.text.strip()


def normalize(messages: list[TranscriptMessage]) -> list[TranscriptMessage]:
    """Drop blank text, merge consecutive same-role messages, tool results first."""
    merged: list[TranscriptMessage] = []
    for message in messages:
        blocks = [b for b in message.blocks if not _is_blank_text(b)]
        if not blocks:
            continue
        if merged and merged[-1].role == message.role:
            blocks = merged.pop().blocks + blocks
        if message.role == "user":
            results = [b for b in blocks if isinstance(b, ToolResultBlock)]
            blocks = results + [b for b in blocks if not isinstance(b, ToolResultBlock)]
        merged.append(TranscriptMessage(role=message.role, blocks=blocks))
    return merged


def check_invariants(
    messages: list[TranscriptMessage], start: int = 0, used: Container[str] = ()
) -> list[str]:
    """Every way `messages` would be refused by a strict provider; empty when valid.
    `start`: only the messages from there on are checked (those before it passed, and are
    the same); `used`: the tool_use ids of the messages before `start`."""
    problems: list[str] = []
    if not messages:
        return ["the request has no messages"]
    if start == 0 and messages[0].role != "user":
        problems.append("messages.0: the first message must be a user message")
    seen_ids: set[str] = set()
    for i in range(start, len(messages)):
        message = messages[i]
        where = f"messages.{i}"
        if not message.blocks:
            problems.append(f"{where}: empty message")
        if i and messages[i - 1].role == message.role:
            problems.append(f"{where}: two consecutive {message.role} messages")
        for j, block in enumerate(message.blocks):
            if _is_blank_text(block):
                problems.append(f"{where}.content.{j}: empty or whitespace-only text block")
            if isinstance(block, AttachmentBlock) and message.role != "user":
                problems.append(f"{where}.content.{j}: a file in an assistant message")
            if isinstance(block, ToolUseBlock):
                if message.role != "assistant":
                    problems.append(f"{where}.content.{j}: tool_use in a user message")
                if block.id in seen_ids or block.id in used:
                    problems.append(f"{where}.content.{j}: duplicate tool_use id {block.id}")
                seen_ids.add(block.id)
        problems.extend(_pairing_problems(messages, i))
    return problems


def _pairing_problems(messages: list[TranscriptMessage], i: int) -> list[str]:
    message = messages[i]
    previous = messages[i - 1] if i else None
    problems: list[str] = []
    wanted = [b.id for b in message.tool_uses()] if message.role == "assistant" else []
    if wanted:
        following = messages[i + 1] if i + 1 < len(messages) else None
        leading: list[str] = []
        for block in following.blocks if following and following.role == "user" else []:
            if not isinstance(block, ToolResultBlock):
                break
            leading.append(block.tool_use_id)
        missing = [w for w in wanted if w not in leading]
        if missing:
            problems.append(
                f"messages.{i}: tool_use ids without tool_result blocks immediately after: "
                + ", ".join(missing)
            )
    if message.role == "user":
        offered = {b.id for b in previous.tool_uses()} if previous else set()
        for j, block in enumerate(message.blocks):
            if isinstance(block, ToolResultBlock) and block.tool_use_id not in offered:
                problems.append(
                    f"messages.{i}.content.{j}: tool_result for unknown tool_use id "
                    f"{block.tool_use_id}"
                )
    return problems


def unanswered_tool_uses(messages: list[TranscriptMessage]) -> list[ToolUseBlock]:
    """tool_use blocks of the last assistant message that have no tool_result after them."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role == "assistant":
            answered = {
                b.tool_use_id
                for later in messages[index + 1 :]
                for b in later.blocks
                if isinstance(b, ToolResultBlock)
            }
            return [b for b in messages[index].tool_uses() if b.id not in answered]
    return []


@dataclass(slots=True)
class Transcript:
    """What the model sees of a session: the summary of its compacted past (if any), then its
    rows since, in the order they were recorded, each with its row id in the store."""

    rows: list[TranscriptMessage] = field(default_factory=list)
    row_ids: list[int] = field(default_factory=list)
    sources: list[tuple[str, ...]] = field(default_factory=list)  # each row's message ids
    summary: str | None = None
    tool_use_ids: set[str] = field(default_factory=set)
    files: dict[str, bytes] = field(default_factory=dict)  # the rows' attachments, by id

    def append(self, row: TranscriptMessage, row_id: int, sources: Iterable[str] = ()) -> None:
        self.rows.append(row)
        self.row_ids.append(row_id)
        self.sources.append(tuple(sources))
        self.tool_use_ids.update(b.id for b in row.tool_uses())

    def after(self, row_id: int, summary: str | None) -> Transcript:
        """A copy holding the rows after `row_id` (the same row objects, which are never
        changed once stored) under `summary`: what a read of the store would give for them."""
        cut = bisect.bisect_right(self.row_ids, row_id)
        copy = Transcript(self.rows[cut:], self.row_ids[cut:], self.sources[cut:], summary)
        if cut:
            copy.tool_use_ids = {b.id for row in copy.rows for b in row.tool_uses()}
            kept = {a.id for row in copy.rows for a in row.attachments()}
            copy.files = {k: v for k, v in self.files.items() if k in kept}
        else:
            copy.tool_use_ids = set(self.tool_use_ids)
            copy.files = dict(self.files)
        return copy

    def repeated_tool_ids(self, row: TranscriptMessage) -> str:
        """The tool_use ids of `row` that repeat, in it or in the rows before: such a round
        would poison the transcript. Empty when there are none."""
        ids = [b.id for b in row.tool_uses()]
        return ", ".join(sorted({i for i in ids if ids.count(i) > 1 or i in self.tool_use_ids}))

    def compacted(self, cut: int, summary: str) -> None:
        """The rows before `cut` are now `summary`."""
        del self.rows[:cut], self.row_ids[:cut], self.sources[:cut]
        self.summary = summary
        self.tool_use_ids = {b.id for row in self.rows for b in row.tool_uses()}
        kept = {a.id for row in self.rows for a in row.attachments()}
        self.files = {k: v for k, v in self.files.items() if k in kept}
