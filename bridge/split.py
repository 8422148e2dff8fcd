"""Splitting a long answer at a platform's limit on block boundaries, never breaking a code
block.

Splitting works on the markdown (markdown-it's parse, the same the renderers use) and measures
the *rendered* size (the adapter's `render`), so every chunk is rendered on its own and no tag
or code fence spans two messages. A block too big for one message is cut on its own
boundaries: a list into its items, a quote into its blocks, a table into rows (each part
keeps the header), a code block into lines (each part closed and reopened with its language),
a paragraph into lines, then at spaces.

The answer is parsed once. A part that is whole blocks of it (a block, a list's item, a
table's rows under its header, a code block's lines in fences, such parts one after another)
has its parse taken from that one (`bridge.split_shapes`) and handed to `bridge.markdown`
before it is measured: measuring renders a tree, and does not parse the part again. Text cut
inside a block (a paragraph's lines, a quote's blocks) is parsed on its own, as it must be.
"""

from __future__ import annotations

import itertools
import textwrap
from collections.abc import Callable
from typing import TypeVar

from bridge import markdown as md
from bridge.split_shapes import Part, Shapes, node_shape, single, table_rows

Measure = Callable[[str], int]
T = TypeVar("T")


def split(text: str, limit: int, measure: Measure = len) -> list[str]:
    """Markdown chunks each measuring at most `limit`, cut between blocks, else inside a block
    on its own boundaries, else between lines, else at spaces."""
    source = text.strip("\n")
    lines = source.split("\n")
    env: dict[str, object] = {}
    blocks = md.tree(source, env).children
    # Link reference definitions show nothing but are needed wherever their links are: each
    # chunk carries them all.
    shown = {i for node in blocks if node.map for i in range(*node.map)}
    definitions = "\n".join(line for i, line in enumerate(lines) if i not in shown and line.strip())
    tail = f"\n\n{definitions}" if definitions else ""
    sizer = Shapes(measure, tail, sure=Shapes.sure_of(source, env, shown, definitions))
    units = [u for node in blocks for u in _units(node, lines, limit, sizer, 0, None)]
    pieces = [p for u in units for p in ([u] if u.code else _fit(u, limit, sizer))]
    sizes = [sizer.size(p) + 2 for p in pieces]
    chunks = _pack(pieces, sizer.joined, sizes, limit)
    return ["\n\n".join(p.text for p in group) + tail for group in chunks] or [""]


def _pack(
    items: list[T], size_of: Callable[[list[T]], int], sizes: list[int], limit: int
) -> list[list[T]]:
    """`items` in order, in the fewest groups whose `size_of` is at most `limit` (an item too
    big alone is a group of its own). `sizes` estimate each item's share: the count is
    guessed from them, then corrected by how far the measured group was from its estimate,
    so a group costs a few measures, not one per item."""
    groups: list[list[T]] = []
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


def _units(
    node: md.Node, lines: list[str], limit: int, sizer: Shapes, depth: int, parent: md.Node | None
) -> list[Part]:
    if node.type in ("fence", "code_block"):
        return _code(node, limit, sizer)
    start, end = node.map or (0, 0)
    raw = "\n".join(lines[start:end])
    text = textwrap.dedent(raw).strip("\n")
    if not text.strip():
        return []
    # Its parse is the whole's when it stands as it stood there: a block of the answer itself,
    # or an item of a list that is, neither moved left.
    unit = Part(text, node_shape(node, depth, parent) if text == raw.strip("\n") else None)
    if sizer.size(unit) <= limit:
        return [unit]
    if node.type in ("bullet_list", "ordered_list", "list_item", "blockquote"):
        inner = (_units(child, lines, limit, sizer, depth + 1, node) for child in node.children)
        return [u for units in inner for u in units]
    if node.type == "table" and node.map:
        return _table(unit, limit, sizer)
    return [unit]


def _code(node: md.Node, limit: int, sizer: Shapes) -> list[Part]:
    """The block closed whatever the source did, in parts that fit, each with its fences."""
    fence = node.markup if node.type == "fence" else "```"
    opener = f"{fence}{node.info.strip()}"
    language = node.info.split()[0] if node.info.strip() else ""
    body = node.content.removesuffix("\n").split("\n")

    def block(part: list[str]) -> Part:
        code = "\n".join(part)
        # Known to be that code block unless a line of it could close the fence early, or the
        # opener with a "|" could head a table (markdown-it tries tables first).
        closes = any(line.lstrip(" \t").startswith(fence[0] * 3) for line in part)
        shape = None if closes or "|" in opener else single(md.CodeBlock(language, code))
        return Part("\n".join([opener, *part, fence]), shape, code=True)

    whole = block(body)
    if sizer.size(whole) <= limit:
        return [whole]
    fitting = [
        piece
        for line in body
        for piece in _cut_line(line, lambda s: sizer.size(block([s])), limit, verbatim=True)
    ]
    sizes = [len(line) + 1 for line in fitting]
    parts = _pack(fitting, lambda part: sizer.size(block(part)), sizes, limit)
    return [block(p) for p in parts]


def _table(unit: Part, limit: int, sizer: Shapes) -> list[Part]:
    """Rows in parts that fit, each part a table with the header."""
    every = unit.text.split("\n")
    head, rows = every[:2], every[2:]
    table = table_rows(unit.shape, len(rows))

    def part(indices: list[int]) -> Part:
        text = "\n".join([*head, *(rows[i] for i in indices)])
        if table is None:
            return Part(text)
        picked = tuple(table.rows[i] for i in indices)
        shown = table.shown and (table.shown[0], *(table.shown[i + 1] for i in indices))
        return Part(text, single(md.Table(table.header, picked, table.aligns, shown)))

    indices = list(range(len(rows)))
    parts = _pack(indices, lambda p: sizer.size(part(p)), [len(row) + 1 for row in rows], limit)
    return [part(p) for p in parts]


def _fit(unit: Part, limit: int, sizer: Shapes) -> list[Part]:
    """A block without smaller blocks in it: in lines that fit, a longer line cut at spaces."""
    if sizer.size(unit) <= limit:
        return [unit]
    lines = [line.strip() for line in unit.text.splitlines() if line.strip()]
    measure = sizer.measure
    groups = _pack(
        lines, lambda group: measure("\n".join(group)), [len(x) + 1 for x in lines], limit
    )
    out: list[str] = []
    for group in groups:
        joined = "\n".join(group)
        out.extend([joined] if len(group) > 1 else _cut_line(joined, measure, limit))
    return [Part(text) for text in out]


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
