"""Markdown as models write it, read by markdown-it-py (CommonMark with GitHub's tables and
strikethrough) into a small platform-neutral tree. Each adapter renders the tree in its own
markup (`PlatformProfile.render`); `bridge.split` cuts long answers on the same parse.

HTML in the source is never markup here: it stays text, and each renderer escapes it."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from enum import StrEnum
from urllib.parse import urlsplit

from markdown_it import MarkdownIt
from markdown_it.tree import SyntaxTreeNode

PARSER = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
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


@dataclass(frozen=True, slots=True)
class Table:
    header: tuple[tuple[Inline, ...], ...]
    rows: tuple[tuple[tuple[Inline, ...], ...], ...]
    aligns: tuple[str, ...]  # "left", "right", "center" or "" per column


@dataclass(frozen=True, slots=True)
class Rule:
    pass


Block = Paragraph | Heading | CodeBlock | ListBlock | Quote | Table | Rule
RULE_TEXT = "\u2500" * 12


def parse(markdown: str) -> tuple[Block, ...]:
    return _blocks(SyntaxTreeNode(PARSER.parse(markdown)).children)


def tree(markdown: str) -> SyntaxTreeNode:
    """markdown-it's own tree, with source line maps (for splitting)."""
    return SyntaxTreeNode(PARSER.parse(markdown))


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
    rows = [[_cell(c) for c in table.header], *[[_cell(c) for c in r] for r in table.rows]]
    columns = max(len(r) for r in rows)
    rows = [r + [""] * (columns - len(r)) for r in rows]
    widths = [max(1, *(_width(r[i]) for r in rows)) for i in range(columns)]
    aligns = list(table.aligns) + [""] * (columns - len(table.aligns))

    def line(cells: list[str]) -> str:
        padded = (_pad(c, w, a) for c, w, a in zip(cells, widths, aligns, strict=True))
        return " | ".join(padded).rstrip()

    rule = "-+-".join("-" * w for w in widths)
    return "\n".join([line(rows[0]), rule, *(line(r) for r in rows[1:])])


def _cell(inlines: tuple[Inline, ...]) -> str:
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


def _pad(text: str, width: int, align: str) -> str:
    gap = width - _width(text)
    if align == "right":
        return " " * gap + text
    if align == "center":
        return " " * (gap // 2) + text + " " * (gap - gap // 2)
    return text + " " * gap


def _blocks(nodes: list[SyntaxTreeNode]) -> tuple[Block, ...]:
    return tuple(b for n in nodes if (b := _block(n)) is not None)


def _block(node: SyntaxTreeNode) -> Block | None:
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
            items = tuple(_blocks(item.children) for item in node.children)
            return ListBlock(node.type == "ordered_list", int(start), items)
        case "blockquote":
            return Quote(_blocks(node.children))
        case "table":
            return _table(node)
        case "hr":
            return Rule()
    content = node.content.strip()
    return Paragraph((Text(content),)) if content else None


def _table(node: SyntaxTreeNode) -> Table:
    rows = [tr for section in node.children for tr in section.children]
    cells = [tuple(_inline_of(cell) for cell in tr.children) for tr in rows]
    aligns = tuple(
        str(cell.attrs.get("style", "")).removeprefix("text-align:") for cell in rows[0].children
    )
    return Table(cells[0], tuple(cells[1:]), aligns)


def _inline_of(node: SyntaxTreeNode) -> tuple[Inline, ...]:
    return _inlines(node.children[0].children) if node.children else ()


def _inlines(nodes: list[SyntaxTreeNode]) -> tuple[Inline, ...]:
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
