"""The bridge's markdown tree as Telegram's HTML parse mode, in a form the Bot API cannot
refuse: only tags it supports (b, i, s, code, pre, pre+code with a language, a, blockquote),
always closed in order, every `<`, `>` and `&` of the text escaped, only absolute links
as `href`. Entity rules respected: nothing inside code or pre, nothing but text inside a
link, a quote never inside a quote (a nested quote shows its text in the outer one)."""

from __future__ import annotations

import html
import re

from bridge import markdown as md

_TAGS = {md.Style.BOLD: "b", md.Style.ITALIC: "i", md.Style.STRIKE: "s"}
_LANGUAGE = re.compile(r"[^A-Za-z0-9_+#.-]")


def render(text: str) -> str:
    shown = _blocks(md.parse(text), quoted=False)
    # Markdown that shows nothing (only link definitions): its source, rather than nothing.
    return shown if shown.strip() else _escape(text.strip())


def _escape(text: str) -> str:
    return html.escape(text, quote=False)


def _blocks(blocks: tuple[md.Block, ...], *, quoted: bool, sep: str = "\n\n") -> str:
    return sep.join(s for b in blocks if (s := _block(b, quoted=quoted)))


def _block(block: md.Block, *, quoted: bool) -> str:
    match block:
        case md.Paragraph(inlines=inlines):
            return _inlines(inlines)
        case md.Heading(inlines=inlines):
            shown = _inlines(md.without(md.Style.BOLD, inlines))
            return f"<b>{shown}</b>" if shown.strip() else shown
        case md.CodeBlock(language=language, body=body):
            return _pre(body, _LANGUAGE.sub("", language))
        case md.ListBlock():
            return _list(block, quoted=quoted)
        case md.Quote(blocks=blocks):
            inner = _blocks(blocks, quoted=True)
            return inner if quoted or not inner else f"<blockquote>{inner}</blockquote>"
        case md.Table():
            return _pre(md.table_text(block), "")
        case md.Rule():
            return md.RULE_TEXT


def _pre(body: str, language: str) -> str:
    shown = _escape(body) if body.strip() else " "
    if language:
        return f'<pre><code class="language-{language}">{shown}</code></pre>'
    return f"<pre>{shown}</pre>"


def _list(block: md.ListBlock, *, quoted: bool) -> str:
    lines: list[str] = []
    for index, item in enumerate(block.items):
        marker = block.marker(index)
        body = _blocks(item, quoted=quoted, sep="\n")
        lines.append(f"{marker} {_indent(body, ' ' * (len(marker) + 1), first=False)}")
    return "\n".join(lines)


def _indent(text: str, pad: str, *, first: bool = True) -> str:
    """Every line indented but the ones inside a code block (code stays verbatim)."""
    out: list[str] = []
    in_pre = False
    for i, line in enumerate(text.split("\n")):
        indent = not in_pre and (first or i > 0) and line
        out.append(f"{pad}{line}" if indent else line)
        if in_pre:
            in_pre = "</pre>" not in line
        else:
            in_pre = "<pre" in line and "</pre>" not in line.rsplit("<pre", 1)[-1]
    return "\n".join(out)


def _inlines(inlines: tuple[md.Inline, ...]) -> str:
    out: list[str] = []
    for node in inlines:
        match node:
            case md.Text(text=text):
                out.append(_escape(text))
            case md.Code(text=text):
                out.append(f"<code>{_escape(text)}</code>" if text.strip() else _escape(text))
            case md.Styled(style=style, children=children):
                inner = _inlines(children)
                tag = _TAGS[style]
                out.append(f"<{tag}>{inner}</{tag}>" if inner.strip() else inner)
            case md.Link(url=url):
                label = _escape(md.link_label(node))
                if md.linkable(url):
                    out.append(f'<a href="{html.escape(url, quote=True)}">{label}</a>')
                else:  # a relative or unknown target: shown, not linked
                    shown = _escape(url)
                    out.append(shown if label == shown else f"{label} ({shown})")
            case md.Break():
                out.append("\n")
    return "".join(out)
