"""The questions of `switchboard init` on a terminal: each one is asked again until its
answer is one it can take, after a line saying what is expected; secrets are read hidden
(getpass, from the terminal itself)."""

from __future__ import annotations

import difflib
import getpass
from collections.abc import Callable
from typing import TypeVar

from adapters.platform_setup import Shape
from adapters.platforms import platforms as registered
from adapters.server.credential_shapes import problem

T = TypeVar("T")


class Refused(Exception):
    """An answer that cannot be taken; the message says what is expected."""


def ask(prompt: str, take: Callable[[str], T], *, hidden: bool = False) -> T:
    """What `take` makes of the answer, asked again for as long as it refuses it."""
    while True:
        said = (getpass.getpass(prompt) if hidden else input(prompt)).strip()
        try:
            return take(said)
        except Refused as exc:
            print(f"  {exc}. Try again (Ctrl-C stops, nothing written).")


def required(shape: Shape) -> Callable[[str], str]:
    """An answer of this shape."""

    def take(said: str) -> str:
        if (wrong := problem(said, shape)) is not None:
            raise Refused(wrong)
        return said

    return take


def optional(shape: Shape) -> Callable[[str], str | None]:
    """An answer of this shape, or None for an empty one."""
    of_shape = required(shape)
    return lambda said: of_shape(said) if said else None


def yes(prompt: str, *, default: bool) -> bool:
    def take(said: str) -> bool:
        if not said:
            return default
        if said.lower() in ("y", "yes"):
            return True
        if said.lower() in ("n", "no"):
            return False
        raise Refused(f"answer y or n (Enter: {'y' if default else 'n'})")

    return ask(f"{prompt} [{'Y/n' if default else 'y/N'}] ", take)


def choices() -> str:
    """`telegram, slack or both`: the platforms, and the word for every one of them."""
    names = [p.name for p in registered()]
    return f"{', '.join(names)} or {_every(names)}"


def _every(names: list[str]) -> str:
    return "both" if len(names) == 2 else "all"


def platforms(said: str) -> list[str]:
    """A platform, `both` (`all`), or several named (`telegram, slack`); empty: the first."""
    names = [p.name for p in registered()]
    said = said.lower() or names[0]
    if said == _every(names):
        return names
    chosen = said.replace(",", " ").split()
    for word in chosen:
        if word not in names:
            close = difflib.get_close_matches(word, [*names, _every(names)], n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise Refused(
                f"{word!r} is not a platform{hint}: answer {choices()} (Enter: {names[0]})"
            )
    return list(dict.fromkeys(chosen))
