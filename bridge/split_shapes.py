"""The parts `bridge.split` measures, with their parses where it knows them without parsing.

A part's parse is known from the whole answer's when the part stands as it stood there (a
block of the answer, or an item of a list that is one; a table's header with some of its rows;
a code block's lines in fences), or when it is such parts one after another, a blank line
between: their blocks in order, two lists of the same kind met at the join being one list, as
markdown-it reads them. Anything else (text cut inside a paragraph, a quote's blocks) is parsed
on its own, as before, and then known the same way for the joins it is in.

Only sure cases are taken: a part that starts indented (it could continue the list before
it), a part with a code block that could run on, or link definitions anywhere but apart (the
split gives every chunk those): parsed, not derived.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from markdown_it.rules_block.table import MAX_AUTOCOMPLETED_CELLS

from bridge import markdown as md

LISTS = ("bullet_list", "ordered_list")
CODE = ("fence", "code_block")


@dataclass(frozen=True, slots=True)
class Shape:
    """A part's parse, and the kind of list it starts and ends with ("-", "+", "*" for
    bullets, "." or ")" for numbers; "" when it does not start or end with a list)."""

    blocks: tuple[md.Block, ...]
    first: str = ""
    last: str = ""


@dataclass(frozen=True, slots=True)
class Part:
    text: str
    shape: Shape | None = None  # None: not known without parsing it
    code: bool = False  # a code block already cut to size


def single(block: md.Block) -> Shape:
    return Shape((block,))


def node_shape(node: md.Node, depth: int, parent: md.Node | None) -> Shape | None:
    """The parse of a node's own source, where it stands as in the answer: a block of the
    answer (`depth` 0), or an item of such a list, its `parent` (a list of its own, numbered
    from it)."""
    if runs_on([node]):
        return None
    if depth == 0:
        blocks = md.from_tree([node])
        kind = node.markup if node.type in LISTS else ""
        return Shape(blocks, kind, kind) if blocks else None
    if depth == 1 and node.type == "list_item" and parent is not None:
        ordered = parent.type == "ordered_list"
        item = md.ListBlock(
            ordered, int(node.info) if ordered else 1, (md.from_tree(node.children),)
        )
        return Shape((item,), parent.markup, parent.markup)
    return None


def runs_on(nodes: list[md.Node]) -> bool:
    """Whether a code fence among the nodes is never closed: it runs to the end of what holds
    it, and would take in the blank line after it."""
    for node in nodes:
        start, end = node.map or (0, 0)
        content = node.content
        lines = content.count("\n") + (not content.endswith("\n") and content != "")
        if node.type == "fence" and end - start != lines + 2:  # its opener, lines and closer
            return True
        if node.type not in ("table", "inline", "paragraph", "heading") and runs_on(node.children):
            return True
    return False


def table_rows(shape: Shape | None, rows: int) -> md.Table | None:
    """The table a part's shape is, where each of its `rows` source lines is one of its rows,
    whichever of them stand under its header (markdown-it stops filling short rows after
    many cells)."""
    table = shape.blocks[0] if shape is not None and len(shape.blocks) == 1 else None
    if not isinstance(table, md.Table) or len(table.rows) != rows:
        return None
    return table if (rows + 1) * len(table.header) <= MAX_AUTOCOMPLETED_CELLS else None


def joined(shapes: list[Shape | None], texts: list[str]) -> Shape | None:
    """The parse of `texts` joined by blank lines, from theirs."""
    if any(s is None for s in shapes) or any(not t or t.startswith((" ", "\t")) for t in texts):
        return None
    blocks: list[md.Block] = []
    first = last = ""
    for index, shape in enumerate(s for s in shapes if s is not None):
        rest = shape.blocks
        if index == 0:
            first = shape.first
        elif last and last == shape.first:  # one list: the items go on from the last's
            before, after = blocks[-1], rest[0]
            assert isinstance(before, md.ListBlock) and isinstance(after, md.ListBlock)
            blocks[-1] = md.ListBlock(before.ordered, before.start, before.items + after.items)
            rest = rest[1:]
        blocks.extend(rest)
        last = shape.last
    return Shape(tuple(blocks), first, last)


class Shapes:
    """Measures parts (`measure` of the part with the link definitions after it, each text
    once), handing the parse of each to `bridge.markdown` first where it is known."""

    def __init__(self, measure: Callable[[str], int], tail: str, *, sure: bool) -> None:
        self._measure = measure
        self._tail = tail
        self._sure = sure
        self._sizes: dict[str, int] = {}
        self._shapes: dict[str, Shape | None] = {}

    @staticmethod
    def sure_of(source: str, env: dict[str, Any], shown: set[int], definitions: str) -> bool:
        """Whether parts' parses may be derived at all: every link definition stands apart
        (so it is in the tail each part is measured with, and in no part), unindented, and
        lines end as markdown-it counts them."""
        if "\r" in source or any(line.startswith((" ", "\t")) for line in definitions.split("\n")):
            return False
        refs = [*env.get("references", {}).values(), *env.get("duplicate_refs", [])]
        return all(ref["map"][0] not in shown for ref in refs)

    def size(self, part: Part) -> int:
        size = self._sizes.get(part.text)
        if size is None:
            if self._sure:
                shape = part.shape
                if shape is None:
                    shape = self._parsed(part.text)
                else:
                    md.known(part.text + self._tail, shape.blocks)
                self._shapes[part.text] = shape
            size = self._sizes[part.text] = self._measure(part.text + self._tail)
        return size

    def measure(self, text: str) -> int:
        return self.size(Part(text))

    def joined(self, parts: list[Part]) -> int:
        """The size of the parts joined by blank lines (the shapes of each already sized)."""
        texts = [p.text for p in parts]
        text = "\n\n".join(texts)
        if text in self._sizes or not self._sure:
            return self.size(Part(text))
        return self.size(Part(text, joined([self._shapes.get(t) for t in texts], texts)))

    def _parsed(self, text: str) -> Shape | None:
        """The text parsed on its own (and its parse kept for the measure's render); its shape
        where it can join others: no code block at its top (it could run on), no link
        definitions of its own."""
        env: dict[str, Any] = {}
        nodes = md.tree(text + self._tail, env).children
        blocks = md.from_tree(nodes)
        md.known(text + self._tail, blocks)
        lines = text.count("\n") + 1
        refs = [*env.get("references", {}).values(), *env.get("duplicate_refs", [])]
        if not blocks or len(blocks) != len(nodes) or any(n.type in CODE for n in nodes):
            return None
        if runs_on(nodes):
            return None
        if any(ref["map"][0] < lines for ref in refs):
            return None
        kinds = [n.markup if n.type in LISTS else "" for n in (nodes[0], nodes[-1])]
        return Shape(blocks, kinds[0], kinds[1])
