"""Markdown as models write it, read into the few pieces chat platforms can show: fenced code
blocks, inline code, bold, links and plain text. Each adapter renders the pieces in its own
markup (`PlatformProfile.render`); `bridge.split` cuts long answers without breaking a block."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

FENCE = re.compile(r"^```")
_INLINE = re.compile(r"`([^`\n]+)`|\*\*(.+?)\*\*|\[([^\]\n]+)\]\((https?://[^)\s]+)\)")


@dataclass(frozen=True, slots=True)
class Text:
    text: str


@dataclass(frozen=True, slots=True)
class CodeBlock:
    body: str  # without its fences


@dataclass(frozen=True, slots=True)
class CodeSpan:
    text: str


@dataclass(frozen=True, slots=True)
class Bold:
    text: str


@dataclass(frozen=True, slots=True)
class Link:
    label: str
    url: str


Piece = Text | CodeBlock | CodeSpan | Bold | Link


def pieces(markdown: str) -> Iterator[Piece]:
    """The text in order, as pieces; joined back they hold every character shown."""
    for is_code, block in code_split(markdown):
        if is_code:
            yield CodeBlock(strip_fence(block))
            continue
        last = 0
        for m in _INLINE.finditer(block):
            if m.start() > last:
                yield Text(block[last : m.start()])
            code, bold, label, url = m.groups()
            if code is not None:
                yield CodeSpan(code)
            elif bold is not None:
                yield Bold(bold)
            else:
                yield Link(label, url)
            last = m.end()
        if last < len(block):
            yield Text(block[last:])


def code_split(text: str) -> list[tuple[bool, str]]:
    """Alternating (is_code, text) pieces; an unclosed fence runs to the end."""
    found: list[tuple[bool, str]] = []
    current: list[str] = []
    in_code = False
    for line in text.splitlines(keepends=True):
        if FENCE.match(line):
            if in_code:
                current.append(line)
                found.append((True, "".join(current)))
                current, in_code = [], False
                continue
            if current:
                found.append((False, "".join(current)))
            current, in_code = [line], True
            continue
        current.append(line)
    if current:
        found.append((in_code, "".join(current)))
    return found


def strip_fence(block: str) -> str:
    lines = block.splitlines()
    if lines and FENCE.match(lines[0]):
        lines = lines[1:]
    if lines and FENCE.match(lines[-1]):
        lines = lines[:-1]
    return "\n".join(lines)
