"""The transcript owns tool-call ids (issue 41): a turn can move between providers mid-way.

Each provider says what ids it takes (`IdShape`). A provider module mints a transcript id
for every tool call a response brings (`mint`), whatever id the provider gave it (some reuse
ids across rounds, some give `call_0` every time); and when it lowers a request it maps
every transcript id to its own shape (`lowered`): an id that fits is kept, any other becomes
a digest of it that fits, the same for the same id, distinct within the request.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import string
from collections.abc import Iterable
from dataclasses import dataclass

ALNUM = string.ascii_letters + string.digits
MINTED_LENGTH = 24  # "tu" and 22 letters and digits: fits Anthropic's and OpenAI's ids


@dataclass(frozen=True, slots=True)
class IdShape:
    """The ids a provider takes: at most `max_length` characters matching `pattern`."""

    max_length: int
    pattern: re.Pattern[str]
    alphabet: str = ALNUM  # what a digest that must fit is spelled with
    exact_length: bool = False  # ids must be exactly max_length long

    def fits(self, tool_id: str) -> bool:
        long_enough = len(tool_id) == self.max_length if self.exact_length else bool(tool_id)
        return long_enough and len(tool_id) <= self.max_length and bool(self.pattern.match(tool_id))


ANTHROPIC = IdShape(64, re.compile(r"^[a-zA-Z0-9_-]+$"))
OPENAI = IdShape(64, re.compile(r"^[\x21-\x7e]+$"))
# Mistral's and some OpenAI-compatible servers': exactly nine letters and digits.
NINE_ALNUM = IdShape(9, re.compile(r"^[a-zA-Z0-9]{9}$"), exact_length=True)


def mint() -> str:
    """A new transcript id for a tool call."""
    return "tu" + "".join(secrets.choice(ALNUM) for _ in range(MINTED_LENGTH - 2))


def lowered(ids: Iterable[str], shape: IdShape) -> dict[str, str]:
    """Each transcript id -> the id to send in `shape`: itself where it fits; otherwise a
    digest that fits, distinct from every other id sent in the same request."""
    ids = list(dict.fromkeys(ids))
    taken = {i for i in ids if shape.fits(i)}
    mapped: dict[str, str] = {}
    for tool_id in ids:
        if tool_id in taken:
            mapped[tool_id] = tool_id
            continue
        salt = 0
        candidate = _digest(tool_id, shape, salt)
        while candidate in taken:
            salt += 1
            candidate = _digest(tool_id, shape, salt)
        taken.add(candidate)
        mapped[tool_id] = candidate
    return mapped


def _digest(tool_id: str, shape: IdShape, salt: int) -> str:
    """`tool_id` as `shape.max_length` characters of `shape.alphabet` (at most 24)."""
    number = int.from_bytes(hashlib.sha256(f"{salt}:{tool_id}".encode()).digest(), "big")
    length = min(shape.max_length, MINTED_LENGTH)
    spelled = []
    for _ in range(length):
        number, index = divmod(number, len(shape.alphabet))
        spelled.append(shape.alphabet[index])
    return "".join(spelled)
