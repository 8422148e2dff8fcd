"""The parts of a read's SQL that depend on its arguments: the `?` marks of an `IN (...)`,
and a WHERE of only the filters a caller gave."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def marks(count: int) -> str:
    """`?,?,?` for an `IN (...)` of `count` values; for none, NULL (`IN (NULL)` matches no
    row, where `IN ()` is an error)."""
    return ",".join("?" * count) or "NULL"


class Where:
    """A WHERE of the conditions whose value was given (each method skips a None), joined by
    AND; with none, every row."""

    def __init__(self) -> None:
        self.conditions: list[str] = []
        self.params: list[Any] = []

    def _add(self, condition: str, *params: Any) -> Where:
        self.conditions.append(condition)
        self.params.extend(params)
        return self

    def equal(self, column: str, value: Any) -> Where:
        return self if value is None else self._add(f"{column} = ?", value)

    def among(self, column: str, values: Sequence[Any] | None) -> Where:
        """`column` is one of `values`; none given (None or empty): no condition."""
        return self._add(f"{column} IN ({marks(len(values))})", *values) if values else self

    def starts_with(self, column: str, prefix: str | None) -> Where:
        """Compared, not LIKE: an id may hold `_` or `%`, which LIKE takes for wildcards."""
        if prefix is None:
            return self
        return self._add(f"substr({column}, 1, length(?)) = ?", prefix, prefix)

    def select(self, select: str, *, order_by: str) -> str:
        """`select` (`SELECT ... FROM table`) with this WHERE, in this order."""
        where = f" WHERE {' AND '.join(self.conditions)}" if self.conditions else ""
        return f"{select}{where} ORDER BY {order_by}"
