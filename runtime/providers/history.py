"""A session's history as it was last prepared for a request, kept between its requests.

Every round sends the whole conversation, and preparing it (counting its characters, lowering
it into a provider's request, encoding that) walked every row each time: a session's CPU per
round grew with its length. A `History` lives with its session and is handed over in each
request (`ProviderRequest.history`); what was prepared for the rows that are still the same
objects is used again, so a round prepares only what is new. Rows are never changed once
recorded: a compaction, a repair or an edit is a different row object (or none), which ends
the part that is used again there.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(eq=False, slots=True)
class History:
    """What each preparer (by its name) kept of the session's last request."""

    kept: dict[object, Any] = field(default_factory=dict)


class SameIds(dict[str, str]):
    """Every tool-call id sent as it is (where each was checked to fit the provider's shape)."""

    def __missing__(self, key: str) -> str:
        return key


def same_prefix(old: Sequence[object], new: Sequence[object]) -> int:
    """How many leading items of `old` and `new` are the very same objects."""
    same = list(map(operator.is_, old, new))
    try:
        return same.index(False)
    except ValueError:
        return len(same)
