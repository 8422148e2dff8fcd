"""What a reload changes, key by key, in words an admin reads: `agents.assistant.model:
claude-a -> claude-b`, `schedules.pulse added`, `telegram.bot_token changed`. A secret (a
token, a key, a value that holds one) is never shown: it is said to have changed, no more."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, SecretStr

LONG = 40  # a text longer than this (a prompt) is said to have changed, not shown


class _Secret:
    """A secret's place in a dump: equal to another only when the values are."""

    def __init__(self, value: str) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Secret) and other.value == self.value

    def __hash__(self) -> int:
        return hash(self.value)


def changes(old: Any, new: Any, secrets: Iterable[str] = ()) -> list[str]:
    """Each key that differs between `old` and `new`, in the file's order. `secrets`: values
    that must not be shown wherever they appear (in a URL, say)."""
    hidden = {s for s in secrets if s}
    out: list[str] = []
    _compare(_dump(old), _dump(new), (), hidden, out)
    return out


def _dump(value: Any) -> Any:
    """The model as plain data, each secret wrapped, each unset default left as it is."""
    if isinstance(value, SecretStr):
        return _Secret(value.get_secret_value())
    if isinstance(value, BaseModel):
        return {name: _dump(getattr(value, name)) for name in type(value).model_fields}
    if isinstance(value, dict):
        return {str(k): _dump(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_dump(v) for v in value]
    return value


def _key(item: Any) -> str | None:
    if isinstance(item, dict):
        name = item.get("id", item.get("name"))
        return name if isinstance(name, str) else None
    return None


def _compare(old: Any, new: Any, where: tuple[str, ...], hidden: set[str], out: list[str]) -> None:
    if old == new:
        return
    at = ".".join(where)
    if isinstance(old, dict) and isinstance(new, dict):
        for k in [*old, *(k for k in new if k not in old)]:
            _compare(old.get(k), new.get(k), (*where, k), hidden, out)
        return
    if isinstance(old, list) and isinstance(new, list) and _by_id(old, new):
        before = {_key(i): i for i in old}
        after = {_key(i): i for i in new}
        for k, item in before.items():
            if k not in after:
                out.append(f"{at}.{k} removed")
            else:
                _compare(item, after[k], (*where, str(k)), hidden, out)
        out += [f"{at}.{k} added" for k in after if k not in before]
        return
    if isinstance(old, list) and isinstance(new, list) and not _holds_models(old + new):
        shown = [
            *(f"{_shown(v, hidden)} added" for v in new if v not in old),
            *(f"{_shown(v, hidden)} removed" for v in old if v not in new),
        ]
        out.append(f"{at}: {', '.join(shown) or 'reordered'}")
        return
    if _secret(old, hidden) or _secret(new, hidden) or _long(old) or _long(new):
        out.append(f"{at} changed")
        return
    if isinstance(old, dict | list) or isinstance(new, dict | list):
        out.append(f"{at} " + ("added" if old is None else "removed" if new is None else "changed"))
        return
    out.append(f"{at}: {_shown(old, hidden)} -> {_shown(new, hidden)}")


def _by_id(old: list[Any], new: list[Any]) -> bool:
    """Lists of things with ids (agents, schedules), each id once on each side."""
    items = old + new
    if not items or any(_key(i) is None for i in items):
        return False
    return all(len({_key(i) for i in side}) == len(side) for side in (old, new))


def _holds_models(items: list[Any]) -> bool:
    return any(isinstance(i, dict | list) for i in items)


def _secret(value: Any, hidden: set[str]) -> bool:
    if isinstance(value, _Secret):
        return True
    return isinstance(value, str) and any(s in value for s in hidden)


def _long(value: Any) -> bool:
    return isinstance(value, str) and (len(value) > LONG or "\n" in value)


def _shown(value: Any, hidden: set[str]) -> str:
    if _secret(value, hidden):
        return "a secret"
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value if value and not _long(value) else repr(value[:LONG])
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
