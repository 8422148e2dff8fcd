"""What a reader of a markdown answer should find in chat, from the bridge's parse: its words
and its code blocks; and what a chat shows of a Slack message once mrkdwn is applied."""

from __future__ import annotations

import re
from collections import Counter

from markdown_it.tree import SyntaxTreeNode

from bridge import markdown as md

MARKERS = str.maketrans("", "", "*_~`\u200b")


def words(text: str) -> Counter[str]:
    """Words as compared across platforms: without style markers, which some platforms keep
    as text (`snake_case`, a lone `*`) and others use as markup."""
    return Counter(w for w in text.translate(MARKERS).split() if w.strip("|-+\u2500"))


def expected_words(markdown: str) -> Counter[str]:
    return words(" ".join(_texts(md.parse(markdown))))


def code_blocks(markdown: str) -> list[md.CodeBlock]:
    return [b for b in _walk(md.parse(markdown)) if isinstance(b, md.CodeBlock)]


def slack_shown(mrkdwn: str) -> str:
    """A Slack message's text as people read it: links as their label, entities decoded,
    zero-width spaces unseen."""
    shown = re.sub(r"<([^|>]+)\|([^>]*)>", r"\2", mrkdwn).replace("\u200b", "")
    return shown.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def unclosed_fences(chunk: str) -> list[str]:
    """The fenced code blocks of a chunk whose closing fence is missing (cut mid-block)."""
    lines = chunk.split("\n")
    found = []
    for node in SyntaxTreeNode(md.PARSER.parse(chunk)).walk():
        if node.type == "fence" and node.map:
            last = lines[node.map[1] - 1].lstrip(" \t>")  # in a quote or a list item
            if node.map[1] - node.map[0] < 2 or not last.startswith(node.markup):
                found.append(node.info)
    return found


def _walk(blocks: tuple[md.Block, ...]) -> list[md.Block]:
    out: list[md.Block] = []
    for block in blocks:
        out.append(block)
        match block:
            case md.ListBlock(items=items):
                out.extend(b for item in items for b in _walk(item))
            case md.Quote(blocks=inner):
                out.extend(_walk(inner))
    return out


def _texts(blocks: tuple[md.Block, ...]) -> list[str]:
    out: list[str] = []
    for block in _walk(blocks):
        match block:
            case md.Paragraph(inlines=inlines) | md.Heading(inlines=inlines):
                out.append(_inline_text(inlines))
            case md.CodeBlock(body=body):
                out.append(body)
            case md.Table(header=header, rows=rows):
                out.extend(_inline_text(cell) for row in (header, *rows) for cell in row)
    return out


def _inline_text(inlines: tuple[md.Inline, ...]) -> str:
    """The words a reader sees: a link's label (its target when it has none)."""
    out: list[str] = []
    for node in inlines:
        match node:
            case md.Link():
                out.append(md.link_label(node))
            case md.Styled(children=children):
                out.append(_inline_text(children))
            case _:
                out.append(md.plain((node,)))
    return "".join(out)
