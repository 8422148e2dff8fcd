"""The answer so far, cut to what one live message can show: its newest part, since the
whole answer arrives through the outbox once the turn ends."""

from __future__ import annotations

from collections.abc import Callable

ELLIPSIS = "\u2026 "


def tail(answer: str, fits: Callable[[str], bool], most: int) -> str:
    """The longest end of `answer` (at most `most` characters, starting at a line or a word
    where it can) whose rendering `fits`, marked with an ellipsis when cut."""
    if len(answer) <= most and fits(answer):
        return answer
    room = most
    while room > 0:
        cut = answer[-room:]
        for boundary in ("\n", " "):
            at = cut.find(boundary)
            if 0 <= at < len(cut) // 4:
                cut = cut[at + 1 :]
                break
        if fits(ELLIPSIS + cut):
            return ELLIPSIS + cut
        room = room * 3 // 4
    return ""
