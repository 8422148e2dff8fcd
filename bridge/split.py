"""Splitting a long answer at a platform's limit on paragraph and line boundaries, never
breaking a code block.

Splitting works on the markdown and measures the *rendered* size (the adapter's `render`), so
every chunk is rendered on its own and no tag or code fence spans two messages.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from bridge.markdown import code_split, strip_fence


def split(text: str, limit: int, measure: Callable[[str], int] = len) -> list[str]:
    """Markdown chunks each measuring at most `limit`, cut between paragraphs, else between
    lines, else at spaces; a code block too long for one message is closed and reopened."""
    units: list[str] = []
    for is_code, block in code_split(text.strip("\n")):
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
    body = strip_fence(block).splitlines()
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
