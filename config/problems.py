"""Every problem of a file at once: the rules between a file's parts (config/consistency.py
and friends) each say all they find, and a model's validator either raises them together or,
while the file is read for a person (`config/loading.py`), hands them on so that the rest of
the file is still checked."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from difflib import get_close_matches
from typing import Any

from pydantic import ValidationInfo

SINK = "problems"  # the validation context's key of the list problems are handed on to


@dataclass(frozen=True, slots=True)
class Problem:
    what: str  # what is wrong, and how to fix it
    where: tuple[Any, ...] = ()  # the key path, under the model that found it

    def __str__(self) -> str:
        return f"{path_text(self.where)}: {self.what}" if self.where else self.what


class Problems(ValueError):
    """Several problems found by one rule or one model; a ValueError as a single one is."""

    def __init__(self, items: Iterable[Problem | str]) -> None:
        self.items = [i if isinstance(i, Problem) else Problem(i) for i in items]
        super().__init__("; ".join(map(str, self.items)))


def gather(*checks: Callable[[], object]) -> list[Problem]:
    """Each check run, and the problems of every one that fails (not only the first's)."""
    found: list[Problem] = []
    for check in checks:
        try:
            check()
        except Problems as exc:
            found += exc.items
        except ValueError as exc:
            found.append(Problem(str(exc)))
    return found


def settle(found: list[Problem], info: ValidationInfo, where: tuple[Any, ...] = ()) -> None:
    """The problems a model's validator found: handed on (at `where`, the model's key path)
    when the file is read for a person, so that validation goes on to the rest of the file;
    else raised together."""
    if not found:
        return
    sink = info.context.get(SINK) if isinstance(info.context, dict) else None
    if sink is None:
        raise Problems(found)
    sink += [Problem(p.what, (*where, *p.where)) for p in found]


def raise_all(found: Sequence[Problem | str]) -> None:
    if found:
        raise Problems(found)


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """` (did you mean 'assistant'?)` when `name` looks like a misspelling of one of `known`."""
    close = get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def path_text(where: tuple[Any, ...]) -> str:
    out = ""
    for part in where:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"
