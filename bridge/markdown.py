"""Markdown as models write it, read by markdown-it-py (CommonMark with GitHub's tables and
strikethrough) into a small platform-neutral tree. Each adapter renders the tree in its own
markup (`PlatformProfile.render`); `bridge.split` cuts long answers on the same parse.

HTML in the source is never markup here: it stays text, and each renderer escapes it.

Parsing is most of a render's cost (a 20,000-character table: some 40 ms, the render of its
tree 2 ms), and an answer is parsed again and again: measured whole and in parts while it is
split, then each chunk rendered to be sent. So the recent parses are kept (`RECENT`), and
`bridge.split`, which knows the parse of each part it cuts from the one parse of the whole,
leaves those there (`known`) instead of having each part parsed anew."""

from __future__ import annotations

import threading
import unicodedata
from collections import OrderedDict
from dataclasses import dataclass, field
from enum import StrEnum
from urllib.parse import urlsplit

# The parser and its tree, for the split and for tests to check the parse against.
from bridge.markdown_tree import PARSER as PARSER
from bridge.markdown_tree import Node as Node
from bridge.markdown_tree import tree as tree

LINK_SCHEMES = frozenset({"http", "https", "mailto", "tg"})


class Style(StrEnum):
    BOLD = "bold"
    ITALIC = "italic"
    STRIKE = "strike"


@dataclass(frozen=True, slots=True)
class Text:
    text: str


@dataclass(frozen=True, slots=True)
class Code:
    text: str


@dataclass(frozen=True, slots=True)
class Styled:
    style: Style
    children: tuple[Inline, ...]


@dataclass(frozen=True, slots=True)
class Link:
    """A link, or an image shown as a link to it (its alt text the label)."""

    url: str
    children: tuple[Inline, ...]


@dataclass(frozen=True, slots=True)
class Break:
    """A line break the model wrote (hard or soft: in chat a new line is what it meant)."""


Inline = Text | Code | Styled | Link | Break


@dataclass(frozen=True, slots=True)
class Paragraph:
    inlines: tuple[Inline, ...]


@dataclass(frozen=True, slots=True)
class Heading:
    level: int
    inlines: tuple[Inline, ...]


@dataclass(frozen=True, slots=True)
class CodeBlock:
    language: str  # the info string's first word, "" when none
    body: str  # verbatim, without fences or the final newline


@dataclass(frozen=True, slots=True)
class ListBlock:
    ordered: bool
    start: int
    items: tuple[tuple[Block, ...], ...]

    def marker(self, index: int) -> str:
        return f"{self.start + index}." if self.ordered else "•"


@dataclass(frozen=True, slots=True)
class Quote:
    blocks: tuple[Block, ...]


Shown = tuple[tuple[str, int], ...]  # a table row's cells as shown, each with its width


@dataclass(frozen=True, slots=True)
class Table:
    header: tuple[tuple[Inline, ...], ...]
    rows: tuple[tuple[tuple[Inline, ...], ...], ...]
    aligns: tuple[str, ...]  # "left", "right", "center" or "" per column
    # Each row's cells as shown, with their widths, the header's first: worked out once for a
    # parsed table and taken along by its parts (`bridge.split`); () when not known.
    shown: tuple[Shown, ...] = field(default=(), compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Rule:
    pass


Block = Paragraph | Heading | CodeBlock | ListBlock | Quote | Table | Rule
RULE_TEXT = "\u2500" * 12


class _Recent:
    """The parses of the markdown seen last, up to `chars` characters of it in all; shared by
    the threads that render (a lock around each look-up)."""

    def __init__(self, chars: int) -> None:
        self._chars = chars
        self._held = 0
        self._parses: OrderedDict[str, tuple[Block, ...]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, markdown: str) -> tuple[Block, ...] | None:
        with self._lock:
            blocks = self._parses.get(markdown)
            if blocks is not None:
                self._parses.move_to_end(markdown)
            return blocks

    def put(self, markdown: str, blocks: tuple[Block, ...]) -> None:
        if len(markdown) > self._chars:
            return
        with self._lock:
            if markdown in self._parses:
                return
            self._parses[markdown] = blocks
            self._held += len(markdown)
            while self._held > self._chars:
                self._held -= len(self._parses.popitem(last=False)[0])

    def clear(self) -> None:
        with self._lock:
            self._parses.clear()
            self._held = 0


RECENT = _Recent(chars=500_000)


def parse(markdown: str) -> tuple[Block, ...]:
    blocks = RECENT.get(markdown)
    if blocks is None:
        blocks = from_tree(tree(markdown).children)
        RECENT.put(markdown, blocks)
    return blocks


def known(markdown: str, blocks: tuple[Block, ...]) -> None:
    """What `parse(markdown)` is, known without parsing it (from the parse of a whole that
    `markdown` is cut from): kept for the renders about to ask."""
    RECENT.put(markdown, blocks)


def plain(inlines: tuple[Inline, ...]) -> str:
    """The text a reader sees, without markup."""
    out: list[str] = []
    for node in inlines:
        match node:
            case Text(text=text) | Code(text=text):
                out.append(text)
            case Styled(children=children) | Link(children=children):
                out.append(plain(children))
            case Break():
                out.append("\n")
    return "".join(out)


def without(style: Style, inlines: tuple[Inline, ...]) -> tuple[Inline, ...]:
    """The inlines with one style taken off (a heading shown bold needs no bold inside)."""
    out: list[Inline] = []
    for node in inlines:
        if isinstance(node, Styled):
            children = without(style, node.children)
            out.extend(children if node.style is style else (Styled(node.style, children),))
        else:
            out.append(node)
    return tuple(out)


def link_label(link: Link) -> str:
    return plain(link.children).strip() or link.url


def linkable(url: str) -> bool:
    """A URL a chat platform takes as a link target: absolute, of a scheme it opens."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    if parts.scheme.lower() not in LINK_SCHEMES or any(c.isspace() for c in url):
        return False
    return bool(parts.netloc) if parts.scheme.lower() in ("http", "https") else bool(parts.path)


def table_text(table: Table) -> str:
    """The table as aligned monospace lines (for platforms without tables)."""
    shown = table.shown or shown_rows(table.header, table.rows)
    columns = max(len(r) for r in shown)
    sized = [r if len(r) == columns else (*r, *[("", 0)] * (columns - len(r))) for r in shown]
    widths = [max(1, *(r[i][1] for r in sized)) for i in range(columns)]
    aligns = list(table.aligns) + [""] * (columns - len(table.aligns))

    def line(cells: Shown) -> str:
        padded = (_pad(c, w - cw, a) for (c, cw), w, a in zip(cells, widths, aligns, strict=True))
        return " | ".join(padded).rstrip()

    rule = "-+-".join("-" * w for w in widths)
    return "\n".join([line(sized[0]), rule, *(line(r) for r in sized[1:])])


def shown_rows(
    header: tuple[tuple[Inline, ...], ...], rows: tuple[tuple[tuple[Inline, ...], ...], ...]
) -> tuple[Shown, ...]:
    return tuple(tuple((c, _width(c)) for c in map(_cell, row)) for row in (header, *rows))


def _cell(inlines: tuple[Inline, ...]) -> str:
    if len(inlines) == 1 and isinstance(inlines[0], Text | Code):  # most cells: no markup
        return " ".join(inlines[0].text.split())
    return " ".join(plain(inlines).split())


def _width(text: str) -> int:
    """Columns in a monospace font: wide (CJK, most emoji) characters take two."""
    if text.isascii():
        return len(text)
    return sum(
        0
        if unicodedata.combining(c) or c == "\u200d" or "\ufe00" <= c <= "\ufe0f"
        else 2
        if unicodedata.east_asian_width(c) in "WF"
        else 1
        for c in text
    )


def _pad(text: str, gap: int, align: str) -> str:
    """The text in its column, `gap` columns wider than it."""
    if align == "right":
        return " " * gap + text
    if align == "center":
        return " " * (gap // 2) + text + " " * (gap - gap // 2)
    return text + " " * gap


def from_tree(nodes: list[Node]) -> tuple[Block, ...]:
    """The blocks of markdown-it's nodes (`tree(markdown).children` for all of `markdown`)."""
    return tuple(b for n in nodes if (b := _block(n)) is not None)


def _block(node: Node) -> Block | None:
    match node.type:
        case "paragraph":
            return Paragraph(_inline_of(node))
        case "heading":
            return Heading(int(node.tag[1:]), _inline_of(node))
        case "fence" | "code_block":
            language = node.info.split()[0] if node.info.strip() else ""
            return CodeBlock(language, node.content.removesuffix("\n"))
        case "bullet_list" | "ordered_list":
            start = node.attrs.get("start", 1)
            items = tuple(from_tree(item.children) for item in node.children)
            return ListBlock(node.type == "ordered_list", int(start), items)
        case "blockquote":
            return Quote(from_tree(node.children))
        case "table":
            return _table(node)
        case "hr":
            return Rule()
    content = node.content.strip()
    return Paragraph((Text(content),)) if content else None


def _table(node: Node) -> Table:
    rows = [tr for section in node.children for tr in section.children]
    cells = [tuple(_inline_of(cell) for cell in tr.children) for tr in rows]
    aligns = tuple(
        str(cell.attrs.get("style", "")).removeprefix("text-align:") for cell in rows[0].children
    )
    header, body = cells[0], tuple(cells[1:])
    return Table(header, body, aligns, shown_rows(header, body))


def _inline_of(node: Node) -> tuple[Inline, ...]:
    return _inlines(node.children[0].children) if node.children else ()


def _inlines(nodes: list[Node]) -> tuple[Inline, ...]:
    out: list[Inline] = []
    for node in nodes:
        match node.type:
            case "text" | "html_inline":
                out.append(Text(node.content))
            case "code_inline":
                out.append(Code(node.content))
            case "strong":
                out.append(Styled(Style.BOLD, _inlines(node.children)))
            case "em":
                out.append(Styled(Style.ITALIC, _inlines(node.children)))
            case "s":
                out.append(Styled(Style.STRIKE, _inlines(node.children)))
            case "link":
                out.append(Link(str(node.attrs.get("href", "")), _inlines(node.children)))
            case "image":
                alt = _inlines(node.children) or (Text(str(node.attrs.get("alt", ""))),)
                out.append(Link(str(node.attrs.get("src", "")), alt))
            case "softbreak" | "hardbreak":
                out.append(Break())
            case _:
                out.append(Text(node.content))
    return tuple(out)
