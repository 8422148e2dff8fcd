"""The bridge's markdown tree as Slack's mrkdwn: `*bold*`, `_italic_`, `~strike~`, `code`,
``` fences, `<url|label>`, `>` quotes, `•` bullets; `&`, `<` and `>` escaped everywhere.

Slack only sees a marker that stands at a word boundary: `snake*case*` stays literal. Where a
styled span touches a letter or a digit, a zero-width space goes between, so it still shows.
Headings are bold lines; tables are aligned in a code block (mrkdwn has no tables)."""

from __future__ import annotations

from bridge import markdown as md

_MARK = {md.Style.BOLD: "*", md.Style.ITALIC: "_", md.Style.STRIKE: "~"}
_OPEN, _CLOSE = "\ue000", "\ue001"  # where a span starts and ends, until boundaries are known
ZWSP = "\u200b"
FENCE = "```"


def escape(text: str) -> str:
    """Slack's three control characters, as its formatting guide asks."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def render(text: str) -> str:
    shown = _boundaries(_blocks(md.parse(text), sep="\n\n"))
    # Markdown that shows nothing (only link definitions): its source, rather than nothing.
    return shown if shown.strip() else escape(text.strip())


def _boundaries(text: str) -> str:
    """A zero-width space where a span's marker touches a word character outside it."""
    if _OPEN not in text and _CLOSE not in text:  # no span (a table, code): nothing to mark
        return text
    opened: list[str] = []
    before = " "
    for char in text:  # a span's start: look back
        if char == _OPEN:
            opened.append(ZWSP if before.isalnum() else "")
            continue
        opened.append(char)
        if char != _CLOSE:
            before = char
    closed: list[str] = []
    after = " "
    for char in reversed(opened):  # a span's end: look ahead
        if char == _CLOSE:
            closed.append(ZWSP if after.isalnum() else "")
            continue
        closed.append(char)
        after = char or after
    return "".join(reversed(closed))


def _blocks(blocks: tuple[md.Block, ...], *, sep: str) -> str:
    return sep.join(s for b in blocks if (s := _block(b)))


def _block(block: md.Block) -> str:
    match block:
        case md.Paragraph(inlines=inlines):
            return _inlines(inlines)
        case md.Heading(inlines=inlines):
            return _span("*", _inlines(md.without(md.Style.BOLD, inlines)))
        case md.CodeBlock(body=body):
            return _fence(body)
        case md.ListBlock():
            return _list(block)
        case md.Quote(blocks=blocks):
            return "\n".join(f">{' ' if line else ''}{line}" for line in _quoted(blocks))
        case md.Table():
            return _fence(md.table_text(block))
        case md.Rule():
            return md.RULE_TEXT


def _quoted(blocks: tuple[md.Block, ...]) -> list[str]:
    """The quote's lines; a quote inside it shows as part of it (mrkdwn does not nest them)."""
    flat = tuple(b for block in blocks for b in _flat(block))
    return _blocks(flat, sep="\n\n").split("\n")


def _flat(block: md.Block) -> tuple[md.Block, ...]:
    if isinstance(block, md.Quote):
        return tuple(b for inner in block.blocks for b in _flat(inner))
    return (block,)


def _fence(body: str) -> str:
    # A run of three backticks would end the block early: a zero-width space breaks it.
    shown = escape(body).replace(FENCE, f"``{ZWSP}`")
    return f"{FENCE}\n{shown if shown.strip() else ' '}\n{FENCE}"


def _list(block: md.ListBlock) -> str:
    lines: list[str] = []
    for index, item in enumerate(block.items):
        marker = block.marker(index)
        body = "\n".join(s for b in item if (s := _in_item(b))).split("\n")
        pad = " " * (len(marker) + 1)
        in_code = False  # code lines and fences stay where they are: code is verbatim
        for i, line in enumerate(body):
            fence = line == FENCE
            keep = in_code or fence or not line
            lines.append(f"{marker} {line}" if i == 0 else line if keep else pad + line)
            in_code ^= fence
    return "\n".join(lines)


def _in_item(block: md.Block) -> str:
    """A block of a list item. A quote there shows its `>` as text: Slack takes `>` as a quote
    only at the start of a line, and a bare `>` elsewhere must be escaped."""
    if isinstance(block, md.Quote):
        return "\n".join(f"&gt;{' ' if line else ''}{line}" for line in _quoted(block.blocks))
    return _block(block)


def _span(mark: str, inner: str) -> str:
    """`inner` marked; line by line, as a span in mrkdwn cannot cross a line break."""
    if "\n" in inner:
        return "\n".join(_span(mark, line) for line in inner.split("\n"))
    if not inner.strip():
        return inner
    lead = inner[: len(inner) - len(inner.lstrip())]
    trail = inner[len(inner.rstrip()) :]
    return f"{lead}{_OPEN}{mark}{inner.strip()}{mark}{_CLOSE}{trail}"


def _inlines(inlines: tuple[md.Inline, ...]) -> str:
    out: list[str] = []
    for node in inlines:
        match node:
            case md.Text(text=text):
                out.append(escape(text))
            case md.Code(text=text):
                # mrkdwn has no escape for a backtick inside code: such a span stays text.
                plain = "`" in text or not text.strip()
                out.append(escape(text) if plain else _span("`", escape(text)))
            case md.Styled(style=style, children=children):
                out.append(_span(_MARK[style], _inlines(children)))
            case md.Link(url=url):
                label = escape(md.link_label(node))
                if md.linkable(url) and not any(c in url for c in "<>|"):
                    out.append(f"<{url}|{label}>")
                else:
                    shown = escape(url)
                    out.append(shown if label == shown else f"{label} ({shown})")
            case md.Break():
                out.append("\n")
    return "".join(out)
