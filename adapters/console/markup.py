"""The bridge's markdown tree as a terminal shows it: plain text, the markup gone (no `_`,
`*`, backticks or `#` left around words), lists with their markers, code blocks and quotes
indented, tables aligned, a link's address after its label. Line breaks the model wrote stay."""

from __future__ import annotations

from bridge import markdown as md

CODE_INDENT = "    "
QUOTE_MARK = "\u2502 "  # a quote's lines, as a bar before each


def render(text: str) -> str:
    shown = _blocks(md.parse(text))
    # Markdown that shows nothing (only link definitions): its source, rather than nothing.
    return shown if shown.strip() else text.strip()


def _blocks(blocks: tuple[md.Block, ...], sep: str = "\n\n") -> str:
    return sep.join(s for b in blocks if (s := _block(b)))


def _block(block: md.Block) -> str:
    match block:
        case md.Paragraph(inlines=inlines) | md.Heading(inlines=inlines):
            return _inlines(inlines)
        case md.CodeBlock(body=body):
            return "\n".join(CODE_INDENT + line if line else line for line in body.split("\n"))
        case md.ListBlock():
            return _list(block)
        case md.Quote(blocks=blocks):
            return "\n".join(QUOTE_MARK + line for line in _blocks(blocks).split("\n"))
        case md.Table():
            return md.table_text(block)
        case md.Rule():
            return md.RULE_TEXT
    return ""


def _list(block: md.ListBlock) -> str:
    lines: list[str] = []
    for index, item in enumerate(block.items):
        marker = block.marker(index)
        pad = " " * (len(marker) + 1)
        body = _blocks(item, sep="\n").split("\n")
        lines.append(f"{marker} {body[0]}")
        lines += [pad + line if line else line for line in body[1:]]
    return "\n".join(lines)


def _inlines(inlines: tuple[md.Inline, ...]) -> str:
    out: list[str] = []
    for node in inlines:
        match node:
            case md.Text(text=text) | md.Code(text=text):
                out.append(text)
            case md.Styled(children=children):
                out.append(_inlines(children))
            case md.Link(url=url):
                label = md.link_label(node)
                out.append(label if label == url else f"{label} ({url})")
            case md.Break():
                out.append("\n")
    return "".join(out)
