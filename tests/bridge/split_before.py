"""The split as it was before it learnt to reuse one parse of the whole answer (a copy, only
its tree's type name changed), kept as the reference `test_split_same` compares the split with:
the same chunks for the same answer, limit and measure."""

from __future__ import annotations

import functools
import itertools
import textwrap
from collections.abc import Callable
from dataclasses import dataclass

from bridge.markdown import Node, tree

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
    measure = functools.cache(_with(measure, tail))
    units = [u for node in blocks for u in _units(node, lines, limit, measure)]
    pieces = [p for u in units for p in ([u.text] if u.code else _fit(u.text, limit, measure))]
    sizes = [measure(p) + 2 for p in pieces]
    chunks = _pack(pieces, lambda group: measure("\n\n".join(group)), sizes, limit)
    return ["\n\n".join(group) + tail for group in chunks] or [""]


def _pack(
    items: list[str], size_of: Callable[[list[str]], int], sizes: list[int], limit: int
) -> list[list[str]]:
    """`items` in order, in the fewest groups whose `size_of` is at most `limit` (an item too
    big alone is a group of its own). `sizes` estimate each item's share: the count is
    guessed from them, then corrected by how far the measured group was from its estimate,
    so a group costs a few measures, not one per item."""
    groups: list[list[str]] = []
    start = 0
    while start < len(items):
        fits, high = 0, len(items) - start  # known to fit; not yet known not to
        guess = _estimate(sizes[start:], limit)
        for attempt in itertools.count():
            if attempt >= 3:  # the estimates do not settle: halve, to be sure to end
                guess = (fits + high + 1) // 2
            guess = min(max(guess, fits + 1), high)
            measured = size_of(items[start : start + guess])
            if measured <= limit:
                fits = guess
            else:
                high = guess - 1
            if fits >= high:
                break
            ratio = max(measured, 1) / max(sum(sizes[start : start + guess]), 1)
            guess = _estimate(sizes[start:], limit / ratio)
        count = max(fits, 1)
        groups.append(items[start : start + count])
        start += count
    return groups


def _estimate(sizes: list[int], limit: float) -> int:
    """How many of the items, from the first, `limit` holds by their estimated sizes."""
    total = 0
    for count, size in enumerate(sizes):
        total += size
        if total > limit:
            return count
    return len(sizes)


def _with(measure: Measure, tail: str) -> Measure:
    return (lambda s: measure(s + tail)) if tail else measure


def _source(node: Node, lines: list[str]) -> str:
    start, end = node.map or (0, 0)
    return textwrap.dedent("\n".join(lines[start:end])).strip("\n")


def _units(node: Node, lines: list[str], limit: int, measure: Measure) -> list[_Unit]:
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


def _code(node: Node, limit: int, measure: Measure) -> list[_Unit]:
    """The block closed whatever the source did, in parts that fit, each with its fences."""
    fence = node.markup if node.type == "fence" else "```"
    opener = f"{fence}{node.info.strip()}"
    body = node.content.removesuffix("\n").split("\n")

    def block(part: list[str]) -> str:
        return "\n".join([opener, *part, fence])

    if measure(block(body)) <= limit:
        return [_Unit(block(body), code=True)]
    fitting = [
        piece
        for line in body
        for piece in _cut_line(line, lambda s: measure(block([s])), limit, verbatim=True)
    ]
    sizes = [len(line) + 1 for line in fitting]
    parts = _pack(fitting, lambda part: measure(block(part)), sizes, limit)
    return [_Unit(block(p), code=True) for p in parts]


def _table(text: str, limit: int, measure: Measure) -> list[_Unit]:
    """Rows in parts that fit, each part a table with the header."""
    every = text.split("\n")
    head, rows = every[:2], every[2:]
    size_of = lambda part: measure("\n".join([*head, *part]))  # noqa: E731
    parts = _pack(rows, size_of, [len(row) + 1 for row in rows], limit)
    return [_Unit("\n".join([*head, *p])) for p in parts]


def _fit(unit: str, limit: int, measure: Measure) -> list[str]:
    """A block without smaller blocks in it: in lines that fit, a longer line cut at spaces."""
    if measure(unit) <= limit:
        return [unit]
    lines = [line.strip() for line in unit.splitlines() if line.strip()]
    size_of = lambda group: measure("\n".join(group))  # noqa: E731
    groups = _pack(lines, size_of, [len(line) + 1 for line in lines], limit)
    out: list[str] = []
    for group in groups:
        joined = "\n".join(group)
        out.extend([joined] if len(group) > 1 else _cut_line(joined, measure, limit))
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
