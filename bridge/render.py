"""Markdown (as models write it) to each platform's format, and splitting at a platform's
limit on paragraph and line boundaries without ever breaking a code block.

Splitting works on the markdown and measures the *rendered* size, so every chunk is
rendered on its own and no tag or code fence spans two messages.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable

from bridge.types import Platform

_FENCE = re.compile(r"^```")
_INLINE = re.compile(r"`([^`\n]+)`|\*\*(.+?)\*\*|\[([^\]\n]+)\]\((https?://[^)\s]+)\)")


def render(text: str, platform: Platform) -> str:
    if platform is Platform.CONSOLE:
        return text
    out: list[str] = []
    for is_code, block in _code_split(text):
        if is_code:
            body = _strip_fence(block)
            out.append(
                f"<pre>{html.escape(body, quote=False)}</pre>"
                if platform is Platform.TELEGRAM
                else f"```\n{_slack_escape(body)}\n```"
            )
        else:
            out.append(_inline(block, platform))
    return "".join(out)


def _slack_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _inline(text: str, platform: Platform) -> str:
    escape = (
        (lambda s: html.escape(s, quote=False)) if platform is Platform.TELEGRAM else _slack_escape
    )
    out, last = [], 0
    for m in _INLINE.finditer(text):
        out.append(escape(text[last : m.start()]))
        code, bold, label, url = m.groups()
        if platform is Platform.TELEGRAM:
            if code is not None:
                out.append(f"<code>{escape(code)}</code>")
            elif bold is not None:
                out.append(f"<b>{escape(bold)}</b>")
            else:
                out.append(f'<a href="{html.escape(url)}">{escape(label)}</a>')
        elif code is not None:
            out.append(f"`{escape(code)}`")
        elif bold is not None:
            out.append(f"*{escape(bold)}*")
        else:
            out.append(f"<{url}|{escape(label)}>")
        last = m.end()
    out.append(escape(text[last:]))
    return "".join(out)


def _code_split(text: str) -> list[tuple[bool, str]]:
    """Alternating (is_code, text) pieces; an unclosed fence runs to the end."""
    pieces: list[tuple[bool, str]] = []
    current: list[str] = []
    in_code = False
    for line in text.splitlines(keepends=True):
        if _FENCE.match(line):
            if in_code:
                current.append(line)
                pieces.append((True, "".join(current)))
                current, in_code = [], False
                continue
            if current:
                pieces.append((False, "".join(current)))
            current, in_code = [line], True
            continue
        current.append(line)
    if current:
        pieces.append((in_code, "".join(current)))
    return pieces


def _strip_fence(block: str) -> str:
    lines = block.splitlines()
    if lines and _FENCE.match(lines[0]):
        lines = lines[1:]
    if lines and _FENCE.match(lines[-1]):
        lines = lines[:-1]
    return "\n".join(lines)


def split(text: str, limit: int, measure: Callable[[str], int] = len) -> list[str]:
    """Markdown chunks each measuring at most `limit`, cut between paragraphs, else between
    lines, else at spaces; a code block too long for one message is closed and reopened."""
    units: list[str] = []
    for is_code, block in _code_split(text.strip("\n")):
        if is_code:
            units.extend(_split_code(block, limit, measure))
        else:
            units.extend(p for p in re.split(r"\n\s*\n", block.strip("\n")) if p.strip())
    chunks: list[str] = []
    for unit in units:
        for piece in _fit(unit, limit, measure):
            joined = f"{chunks[-1]}\n\n{piece}" if chunks else piece
            if chunks and measure(joined) <= limit:
                chunks[-1] = joined
            else:
                chunks.append(piece)
    return chunks or [""]


def _split_code(block: str, limit: int, measure: Callable[[str], int]) -> list[str]:
    if measure(block) <= limit:
        return [block.rstrip("\n")]
    opener = block.splitlines()[0]
    body = _strip_fence(block).splitlines()
    parts: list[str] = []
    current: list[str] = []
    for line in body:
        candidate = f"{opener}\n" + "\n".join([*current, line]) + "\n```"
        if current and measure(candidate) > limit:
            parts.append(f"{opener}\n" + "\n".join(current) + "\n```")
            current = []
        current.append(line)
    if current:
        parts.append(f"{opener}\n" + "\n".join(current) + "\n```")
    return parts


def _fit(unit: str, limit: int, measure: Callable[[str], int]) -> list[str]:
    if measure(unit) <= limit:
        return [unit]
    if unit.startswith("```"):
        return [unit]  # already cut to size by _split_code, line by line
    out: list[str] = []
    current = ""
    for line in unit.splitlines():
        candidate = f"{current}\n{line}" if current else line
        if measure(candidate) <= limit:
            current = candidate
            continue
        if current:
            out.append(current)
        current = ""
        while measure(line) > limit:
            cut = _cut_point(line, limit, measure)
            out.append(line[:cut].rstrip())
            line = line[cut:].lstrip()
        current = line
    if current:
        out.append(current)
    return out


def _cut_point(line: str, limit: int, measure: Callable[[str], int]) -> int:
    low, high = 1, len(line)
    while low < high:  # the longest prefix that fits
        mid = (low + high + 1) // 2
        if measure(line[:mid]) <= limit:
            low = mid
        else:
            high = mid - 1
    space = line.rfind(" ", 0, low)
    return space if space > low // 2 else low
