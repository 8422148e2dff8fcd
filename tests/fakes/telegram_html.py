"""Telegram's HTML parse mode as the Bot API reads it (https://core.telegram.org/bots/api#html-
style), for the fake: the text after entity parsing, or InvalidRequest with the 400 Telegram
answers ("Bad Request: can't parse entities: ...").

Refused, as Telegram does: a tag it does not support, an end tag that does not close the last
open tag, a tag left open, a `<` that starts no tag, an `&` that starts no entity (only `&lt;`,
`&gt;`, `&amp;`, `&quot;` and numeric ones exist), a link without a usable `href`. And the
documented nesting rules: code and pre contain no entity (but pre holds one code that names
its language), a link holds no link, code, pre or quote, a quote is never inside a quote."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit

ALIASES = {"strong": "b", "em": "i", "ins": "u", "strike": "s", "del": "s"}
TAGS = {"b", "i", "u", "s", "a", "code", "pre", "tg-spoiler", "span", "blockquote", "tg-emoji"}
STYLES = {"b", "i", "u", "s", "tg-spoiler", "span"}
ENTITY = re.compile(r"&(lt|gt|amp|quot|#[0-9]{1,7}|#x[0-9a-fA-F]{1,6});")
_VALUE = r"""(?:"[^"]*"|'[^']*'|[^\s>"']+)"""
START = re.compile(rf"<([a-zA-Z][a-zA-Z0-9-]*)((?:\s+[a-zA-Z-]+(?:\s*=\s*{_VALUE})?)*)\s*>")
END = re.compile(r"</([a-zA-Z][a-zA-Z0-9-]*)\s*>")
ATTR = re.compile(rf"([a-zA-Z-]+)(?:\s*=\s*({_VALUE}))?")
URL_SCHEMES = {"http", "https", "tg", "ton", "mailto"}


class EntityError(Exception):
    """The text Telegram would refuse, with its description."""


@dataclass
class _Open:
    tag: str
    attrs: dict[str, str]
    at: int
    children: list[str] = field(default_factory=list)
    text: bool = False  # any text inside yet


def parse(text: str) -> str:
    """The text as shown, once the entities are taken out."""
    out: list[str] = []
    stack: list[_Open] = []
    at = 0
    while at < len(text):
        char = text[at]
        if char == "&":
            entity = ENTITY.match(text, at)
            if entity is None:
                _fail(f"Unsupported HTML entity at byte offset {_offset(text, at)}")
            shown = html.unescape(entity.group())
            _text(stack, shown, text, at)
            out.append(shown)
            at = entity.end()
        elif char == "<" and (end := END.match(text, at)) is not None:
            _close(stack, end.group(1).lower(), text, at)
            at = end.end()
        elif char == "<" and (start := START.match(text, at)) is not None:
            _open(stack, start.group(1).lower(), _attrs(start.group(2)), text, at)
            at = start.end()
        elif char == "<":
            _fail(f'Unsupported start tag "" at byte offset {_offset(text, at)}')
        else:
            _text(stack, char, text, at)
            out.append(char)
            at += 1
    if stack:
        _fail(f'Can\'t find end tag corresponding to start tag "{stack[-1].tag}"')
    return "".join(out)


def _fail(reason: str) -> None:
    raise EntityError(f"Bad Request: can't parse entities: {reason}")


def _offset(text: str, at: int) -> int:
    return len(text[:at].encode())


def _attrs(raw: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for name, value in ATTR.findall(raw):
        if value[:1] in ("'", '"'):
            value = value[1:-1]
        found[name.lower()] = html.unescape(value)
    return found


def _open(stack: list[_Open], tag: str, attrs: dict[str, str], text: str, at: int) -> None:
    tag = ALIASES.get(tag, tag)
    where = f"at byte offset {_offset(text, at)}"
    if tag not in TAGS or (tag == "span" and attrs.get("class") != "tg-spoiler"):
        _fail(f'Unsupported start tag "{tag}" {where}')
    if tag == "a" and not _url_ok(attrs.get("href", "")):
        _fail(f"Wrong URL in the href attribute {where}")
    inside = {o.tag for o in stack}
    parent = stack[-1] if stack else None
    if parent is not None and parent.tag == "pre" and tag == "code":
        if parent.children or parent.text:
            _fail(f'Entity "code" must be the only content of "pre" {where}')
    elif inside & {"code", "pre"}:
        _fail(f'Entity "{tag}" can\'t be inside a pre or code entity {where}')
    elif "a" in inside and tag not in STYLES:
        _fail(f'Entity "{tag}" can\'t be inside a link {where}')
    elif tag == "blockquote" and "blockquote" in inside:
        _fail(f"Blockquote entities can't be nested {where}")
    if parent is not None:
        parent.children.append(tag)
    stack.append(_Open(tag, attrs, at))


def _close(stack: list[_Open], tag: str, text: str, at: int) -> None:
    tag = ALIASES.get(tag, tag)
    if not stack:
        _fail(f"Unexpected end tag at byte offset {_offset(text, at)}")
    if stack[-1].tag != tag:
        _fail(
            f"Unmatched end tag at byte offset {_offset(text, at)}, "
            f'expected "</{stack[-1].tag}>", found "</{tag}>"'
        )
    closed = stack.pop()
    if closed.tag == "code" and stack and stack[-1].tag == "pre":
        language = closed.attrs.get("class", "")
        if language and not re.fullmatch(r"language-[^\s]+", language):
            _fail(f"Wrong class of code inside pre at byte offset {_offset(text, at)}")


def _text(stack: list[_Open], shown: str, text: str, at: int) -> None:
    if not stack:
        return
    parent = stack[-1]
    if parent.tag == "pre" and parent.children and shown.strip():
        _fail(f'Text after the code entity inside "pre" at byte offset {_offset(text, at)}')
    parent.text = True


def _url_ok(url: str) -> bool:
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return False
    if any(c.isspace() for c in url.strip()) or not url.strip():
        return False
    scheme = parts.scheme.lower()
    if scheme in ("http", "https"):
        return bool(parts.hostname)
    return scheme in URL_SCHEMES and bool(parts.netloc or parts.path)
