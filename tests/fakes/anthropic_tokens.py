"""Token counting and the prompt cache of the fake Messages API (anthropic_api.py).

The count is a deterministic rule, not a tokenizer. Each block costs ceil(chars / 4) tokens,
its chars being:

- a text block, a system text block or a system string: its text;
- a tool_use block: its name plus its input as compact JSON with sorted keys;
- a tool_result block: its content (a string, or the texts of its text blocks);
- a tool definition: its name, its description and its input_schema as compact JSON.

A request costs the sum over its tools, system and messages; `cache_control` changes
nothing. An answer's output tokens are its content blocks counted the same way.

The cache follows Anthropic's prompt caching: the request is read as one sequence of blocks
(tools, then system, then messages). The prefix up to each `cache_control` breakpoint is
written to the cache; a later request with the same model reads the longest cached prefix
that ends at one of its breakpoints or at one of the 20 blocks before each. Usage then
splits the count into `cache_read_input_tokens` (the prefix read), `cache_creation_input_tokens`
(from there to the last breakpoint) and `input_tokens` (the rest, after the last breakpoint).
Entries do not expire, and there is no minimum cacheable length.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from typing import Any

from tests.fakes.anthropic_media import media_tokens
from tests.fakes.anthropic_rules import blocks_of

CHARS_PER_TOKEN = 4
LOOKBACK = 20  # blocks before a breakpoint where the API also looks for a cache hit


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def _chars(block: dict[str, Any]) -> int:
    kind = block.get("type")
    if kind == "text":
        return len(str(block.get("text", "")))
    if kind == "tool_use":
        return len(str(block.get("name", ""))) + len(_compact(block.get("input", {})))
    if kind == "tool_result":
        content = block.get("content", "")
        return sum(len(str(b.get("text", ""))) for b in blocks_of(content) if b["type"] == "text")
    # a tool definition
    return (
        len(str(block.get("name", "")))
        + len(str(block.get("description", "")))
        + len(_compact(block.get("input_schema", {})))
    )


def block_tokens(block: dict[str, Any]) -> int:
    if block.get("type") in ("image", "document"):
        return media_tokens(block)
    return math.ceil(_chars(block) / CHARS_PER_TOKEN)


@dataclass(frozen=True, slots=True)
class Segment:
    """One block of a request, in cache order."""

    key: str  # where it is and what it holds, cache_control left out
    tokens: int
    breakpoint: bool


def segments(body: dict[str, Any]) -> list[Segment]:
    """The request's blocks in the order the cache reads them: tools, system, messages."""
    placed: list[tuple[str, dict[str, Any]]] = [("tool", t) for t in body.get("tools") or []]
    if body.get("system"):
        placed += [("system", b) for b in blocks_of(body["system"])]
    for i, message in enumerate(body["messages"]):
        placed += [(f"{i}:{message['role']}", b) for b in blocks_of(message["content"])]
    return [
        Segment(
            key=_compact([where, {k: v for k, v in block.items() if k != "cache_control"}]),
            tokens=block_tokens(block),
            breakpoint="cache_control" in block,
        )
        for where, block in placed
    ]


def count_tokens(body: dict[str, Any]) -> int:
    return sum(s.tokens for s in segments(body))


@dataclass(frozen=True, slots=True)
class Counted:
    input_tokens: int
    cache_creation_input_tokens: int
    cache_read_input_tokens: int

    @property
    def total(self) -> int:
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens


class PromptCache:
    """The prefixes written so far, by model: a hash of each prefix's blocks."""

    def __init__(self) -> None:
        self._prefixes: set[str] = set()

    def use(self, model: str, body: dict[str, Any]) -> Counted:
        """Count `body`, read what is cached of it, and write its prefixes at its breakpoints."""
        blocks = segments(body)
        hashes, ends = [], []
        digest, total = hashlib.sha256(model.encode()).hexdigest(), 0
        for block in blocks:
            digest = hashlib.sha256((digest + block.key).encode()).hexdigest()
            total += block.tokens
            hashes.append(digest)
            ends.append(total)
        marks = [k for k, block in enumerate(blocks) if block.breakpoint]
        looked = {k for b in marks for k in range(max(0, b - LOOKBACK), b + 1)}
        hits = [k for k in looked if hashes[k] in self._prefixes]
        read = ends[max(hits)] if hits else 0
        written = ends[marks[-1]] - read if marks and ends[marks[-1]] > read else 0
        self._prefixes.update(hashes[k] for k in marks)
        return Counted(total - read - written, written, read)
