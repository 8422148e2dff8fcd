"""Splitting a long answer at a platform's limit on block boundaries, never breaking a code
block.

Splitting works on the markdown (markdown-it's parse, the same the renderers use) and measures
the *rendered* size (the adapter's `render`), so every chunk is rendered on its own and no tag
or code fence spans two messages. A block too big for one message is cut on its own
boundaries: a list into its items, a quote into its blocks, a table into rows (each part
keeps the header), a code block into lines (each part closed and reopened with its language),
a paragraph into lines, then at spaces.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from dataclasses import dataclass

from markdown_it.tree import SyntaxTreeNode

from bridge.markdown import tree

Measure = Callable[[str], int]


@dataclass(frozen=True, slots=True)
class _Unit:
    text: str
    code: bool = False  # a code block already cut to size


def split(text: str, limit: int, measure: Measure = len) -> list[str]:
    """Markdown chunks each measuring at most `limit`, cut between blocks, else inside a block
    on its own boundaries, else between lines, else at spaces."""
    source = text.strip("\n")
    lines = source.split("\n")
    blocks = tree(source).children
    # Link reference definitions show nothing but are needed wherever their links are: each
    # chunk carries them all.
    shown = {i for node in blocks if node.map for i in range(*node.map)}
    definitions = "\n".join(line for i, line in enumerate(lines) if i not in shown and line.strip())
    tail = f"\n\n{definitions}" if definitions else ""
    measure = _with(measure, tail)
    units = [u for node in blocks for u in _units(node, lines, limit, measure)]
    chunks: list[str] = []
    for unit in units:
        for piece in [unit.text] if unit.code else _fit(unit.text, limit, measure):
            joined = f"{chunks[-1]}\n\n{piece}" if chunks else piece
            if chunks and measure(joined) <= limit:
                chunks[-1] = joined
            else:
                chunks.append(piece)
    return [f"{c}{tail}" for c in chunks] or [""]


def _with(measure: Measure, tail: str) -> Measure:
    return (lambda s: measure(s + tail)) if tail else measure


def _source(node: SyntaxTreeNode, lines: list[str]) -> str:
    start, end = node.map or (0, 0)
    return textwrap.dedent("\n".join(lines[start:end])).strip("\n")


def _units(node: SyntaxTreeNode, lines: list[str], limit: int, measure: Measure) -> list[_Unit]:
    if node.type in ("fence", "code_block"):
        return _code(node, limit, measure)
    text = _source(node, lines)
    if not text.strip():
        return []
    if measure(text) <= limit:
        return [_Unit(text)]
    if node.type in ("bullet_list", "ordered_list", "list_item", "blockquote"):
        return [u for child in node.children for u in _units(child, lines, limit, measure)]
    if node.type == "table" and node.map:
        return _table(text, limit, measure)
    return [_Unit(text)]


def _code(node: SyntaxTreeNode, limit: int, measure: Measure) -> list[_Unit]:
    """The block closed whatever the source did, in parts that fit, each with its fences."""
    fence = node.markup if node.type == "fence" else "```"
    opener = f"{fence}{node.info.strip()}"
    body = node.content.removesuffix("\n").split("\n")

    def block(part: list[str]) -> str:
        return "\n".join([opener, *part, fence])

    if measure(block(body)) <= limit:
        return [_Unit(block(body), code=True)]
    parts: list[list[str]] = [[]]
    for line in body:
        for piece in _cut_line(line, lambda s: measure(block([s])), limit, verbatim=True):
            if parts[-1] and measure(block([*parts[-1], piece])) > limit:
                parts.append([])
            parts[-1].append(piece)
    return [_Unit(block(p), code=True) for p in parts]


def _table(text: str, limit: int, measure: Measure) -> list[_Unit]:
    """Rows in parts that fit, each part a table with the header."""
    every = text.split("\n")
    head, rows = "\n".join(every[:2]), every[2:]
    parts: list[list[str]] = [[]]
    for row in rows:
        if parts[-1] and measure("\n".join([head, *parts[-1], row])) > limit:
            parts.append([])
        parts[-1].append(row)
    return [_Unit("\n".join([head, *p])) for p in parts]


def _fit(unit: str, limit: int, measure: Measure) -> list[str]:
    if measure(unit) <= limit:
        return [unit]
    out: list[str] = []
    current = ""
    for raw in unit.splitlines():
        line = raw.strip()
        candidate = f"{current}\n{line}" if current else line
        if measure(candidate) <= limit:
            current = candidate
            continue
        if current:
            out.append(current)
        *whole, current = _cut_line(line, measure, limit)
        out.extend(whole)
    if current:
        out.append(current)
    return out


def _cut_line(line: str, measure: Measure, limit: int, *, verbatim: bool = False) -> list[str]:
    """The line in pieces that fit, cut at spaces where it can (code keeps its spaces)."""
    pieces: list[str] = []
    while measure(line) > limit and len(line) > 1:
        cut = _cut_point(line, limit, measure)
        head, line = line[:cut], line[cut:]
        pieces.append(head if verbatim else head.rstrip() or head)
        line = line if verbatim else line.lstrip() or line
    return [*pieces, line]


def _cut_point(line: str, limit: int, measure: Measure) -> int:
    low, high = 1, len(line)
    while low < high:  # the longest prefix that fits
        mid = (low + high + 1) // 2
        if measure(line[:mid]) <= limit:
            low = mid
        else:
            high = mid - 1
    space = line.rfind(" ", 0, low)
    return space if space > low // 2 else low
