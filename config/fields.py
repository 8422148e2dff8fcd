"""Text an admin types into a field that reaches the model, the chat or the logs (a schedule's
prompt, its agent, where it delivers): bounded in length and free of raw control characters,
which would hide or reorder what an operator reads (ESC sequences, NUL, bidi overrides such
as U+202E). Refused with the field's name and what to fix, never with the text itself."""

from __future__ import annotations

import unicodedata
from typing import Any

from pydantic import BeforeValidator, ValidationInfo

# Unicode's format characters that reorder text (embeddings, overrides, isolates, marks):
# refused like the control characters, though their category is Cf, not Cc.
BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
TEXT_BREAKS = "\n\t"  # allowed in a text of several lines (a prompt), nowhere else


def forbidden_character(text: str, allowed: str = "") -> tuple[int, str] | None:
    """The first raw control character of `text` not in `allowed` (its index and itself)."""
    breaks = "\n" in allowed
    for index, char in enumerate(text):
        if char in allowed or (breaks and char == "\r" and text[index + 1 : index + 2] == "\n"):
            continue  # a line break as Windows writes it, where line breaks pass
        if char in BIDI_CONTROLS or unicodedata.category(char) == "Cc":
            return index, char
    return None


def bounded(max_chars: int, *, lines: bool = False) -> BeforeValidator:
    """A field's check: at most `max_chars` characters, no raw control characters (line
    breaks and tabs pass where `lines`). Runs before the field's own checks, so that none
    of them is handed (or quotes back) megabytes."""

    def check(value: Any, info: ValidationInfo) -> Any:
        if not isinstance(value, str):
            return value  # the field's type says what is wrong
        name = info.field_name or "the value"
        if len(value) > max_chars:
            raise ValueError(f"{name} is {len(value):,} characters long; at most {max_chars:,}")
        found = forbidden_character(value, TEXT_BREAKS if lines else "")
        if found is not None:
            index, char = found
            raise ValueError(
                f"{name} holds a control character (U+{ord(char):04X}, at character "
                f"{index + 1}); remove it{' (line breaks and tabs are fine)' if lines else ''}"
            )
        return value

    return BeforeValidator(check)
