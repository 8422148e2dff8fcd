"""The secret values this process knows, and the one function that masks them wherever text
leaves towards a person or the store: the logs, chat, the console's pages, the audit ledger.

The set holds every secret of the config (tokens, signing secrets, keys, the values of `env`
and `headers` tables), every value of the env file beside it (`bot.env`: `switchboard init`
writes the secrets there), and the model key the Anthropic SDK reads from the environment when
the config names none. A value is masked whatever its case (a library may change a token's
first letter) and in its URL-encoded forms (a token in a URL). A value shorter than
`MIN_CHARS` is not: masking it would garble ordinary words, and it is no secret worth the name.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar, cast
from urllib.parse import quote

from pydantic import BaseModel

from config.loading import env_file
from config.schema import SwitchboardConfig

MASK = "[redacted]"
MIN_CHARS = 6
# What the Anthropic SDK reads from the environment when it is given no key.
MODEL_KEY_VARIABLES = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")

T = TypeVar("T")


class Secrets:
    """A set that only grows: a reloaded config's new tokens are added, and the old ones stay
    masked (a record written before the reload may quote them)."""

    __slots__ = ("_pattern", "_values")

    def __init__(self, values: Iterable[str] = ()) -> None:
        self._values: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        self.learn(values)

    def learn(self, values: Iterable[str]) -> None:
        new = {v for v in values if len(v) >= MIN_CHARS} - self._values
        if not new:
            return
        self._values |= new
        forms = {f for v in self._values for f in (v, quote(v), quote(v, safe=""))}
        ordered = sorted(forms, key=len, reverse=True)  # a longer form first
        self._pattern = re.compile("|".join(map(re.escape, ordered)), re.IGNORECASE)

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __bool__(self) -> bool:
        return bool(self._values)

    def mask(self, text: str) -> str:
        """`text` with every secret replaced by MASK."""
        return text if self._pattern is None else self._pattern.sub(MASK, text)

    def found_in(self, text: str) -> bool:
        return self._pattern is not None and self._pattern.search(text) is not None

    def masked(self, value: T) -> T:
        """`value` (a string, or a list, tuple, dict or pydantic model holding strings) with
        every string in it masked; the same object when nothing in it needed masking."""
        return cast(T, self._masked(value)) if self._pattern is not None else value

    def _masked(self, value: Any) -> Any:
        if isinstance(value, str):
            text = self.mask(value)
            return value if text == value else text
        if isinstance(value, BaseModel):
            changed = {}
            for name in type(value).model_fields:
                item = getattr(value, name)
                if (found := self._masked(item)) is not item:
                    changed[name] = found
            return value.model_copy(update=changed) if changed else value
        if isinstance(value, dict):
            items = {k: self._masked(v) for k, v in value.items()}
            return items if any(items[k] is not v for k, v in value.items()) else value
        if isinstance(value, list | tuple):
            found = [self._masked(v) for v in value]
            changed_any = any(f is not v for f, v in zip(found, value, strict=True))
            return type(value)(found) if changed_any else value
        return value

    def mask_unfinished(self, text: str) -> str:
        """A text still growing (an answer as it streams): masked, and with any end of it that
        could be the start of a secret held back, so no secret shows a piece at a time."""
        text = self.mask(text)
        lowered = text.lower()
        held = 0
        for value in self._values:
            start = value.lower()
            for length in range(min(len(start) - 1, len(lowered)), held, -1):
                if lowered.endswith(start[:length]):
                    held = length
                    break
        return text[: len(text) - held]


def known_secrets(
    config: SwitchboardConfig, path: Path | None, environ: Mapping[str, str] = os.environ
) -> Secrets:
    """The process's secrets at start: the config's, its env file's values (`path`: the file
    the config was read from) and the model key of the environment."""
    found = Secrets(config.secret_values())
    if path is not None:
        found.learn(env_file(path).values())
    found.learn(environ.get(name, "") for name in MODEL_KEY_VARIABLES)
    return found
