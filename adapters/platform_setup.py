"""What a platform asks in `switchboard init` (`adapters/server/init_*.py`): its flags, its
questions on a terminal, the shapes of its answers, the checks of its credentials against it,
and what it writes (its section of the TOML, its secrets in the env file, the operator's id).
Each platform's package has one (`setup.py`); init asks every platform the same way."""

from __future__ import annotations

import argparse
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class Shape:
    name: str  # "a Telegram bot token"
    pattern: re.Pattern[str]
    expected: str  # what one looks like and where to find it, after the name


Check = Callable[[str], Awaitable[str]]
"""A credential tried against its platform: whose it is; `CredentialRefused` or
`PlatformUnreachable` otherwise."""


@dataclass(frozen=True)
class Given:
    """A credential given: what init checks before anything is written."""

    label: str  # "Telegram bot token"
    flag: str  # "--telegram-token"
    value: str | None
    shape: Shape
    check: Check | None = None  # None: its platform has no call that checks it


class Asker(Protocol):
    """How a platform's questions are asked on the terminal (`init_interview.py`)."""

    @property
    def probing(self) -> bool:
        """False with --no-probe: nothing is checked."""
        ...

    def credential(
        self, label: str, shape: Shape, prompt: str, check: Check, *, can_be_empty: bool = False
    ) -> str | None:
        """Asked hidden, of its shape, checked unless the probe is skipped."""
        ...

    def text(self, prompt: str, shape: Shape, *, hidden: bool = False) -> str:
        """An answer of this shape."""
        ...

    def optional(self, prompt: str, shape: Shape) -> str | None:
        """An answer of this shape, or None for an empty one."""
        ...


class Setup(Protocol):
    """One platform's part of one `switchboard init`: its answers, from the flags or asked."""

    def missing(self) -> list[str]:
        """The flags --non-interactive needs for it and was not given."""
        ...

    def credentials(self) -> list[Given]:
        """Its credentials as given (from the flags, or as answered), in the order checked."""
        ...

    def checked(self) -> None:
        """After its credentials were checked (what a check learned, kept)."""
        ...

    def ask(self, asker: Asker) -> None:
        """Its credentials' questions."""
        ...

    def ask_operator(self, asker: Asker) -> None:
        """The operator's id on it (empty: pair by DM instead)."""
        ...

    def operator(self) -> Given | None:
        """The operator's id, as given; None when none was."""
        ...

    def secrets(self) -> dict[str, str | None]:
        """Its secrets for the env file, by variable name."""
        ...

    def section(self) -> list[str]:
        """Its section of the TOML (`[workspaces.<name>]`), with the operator's key after."""
        ...

    def operator_line(self) -> str | None:
        """The operator's id key for `[[workspaces.operators]]`, if one was given."""
        ...


@dataclass(frozen=True)
class SetupKind:
    """What a platform adds to `switchboard init`."""

    flags: Callable[[argparse.ArgumentParser], None]
    """Its flags (`--telegram-token`; `--<name>-api-base-url` is added for it)."""
    operator_flag: str  # "--operator-telegram-id"
    setup: Callable[[argparse.Namespace], Setup]
    """Its part of one init, from the parsed flags."""
    recognized: tuple[Shape, ...] = ()
    """What its credentials look like, to name one given to the wrong question."""
