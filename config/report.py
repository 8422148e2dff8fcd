"""A file validated for a person: every problem in one pass, each with its key path, its line
and its fix.

pydantic reports every field's error, but a model whose fields fail never runs its own
validator: the rules between the parts (an agent's name, a tool's) would wait for the next
round. So the parts that fail are taken out of a copy of the file, one at a time from the
deepest (a misspelt key, or the object it leaves incomplete), and the rest validated again,
until it validates: then the rules between the parts have run on everything still there. The
models hand their problems on (`config/problems.py`) instead of stopping at the first."""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable
from difflib import get_close_matches
from pathlib import Path
from types import UnionType
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from config.errors import ConfigError
from config.problems import SINK, Problem, path_text
from config.schema import SwitchboardConfig

MAX_PASSES = 16  # each takes something out; a file needs far fewer
EXAMPLE = "config/example-full.toml"


class _Gone:
    """In place of a part taken out, until the pass ends."""


GONE = _Gone()


def validate(
    data: dict[str, Any], path: Path, text: str, skip: Iterable[tuple[Any, ...]] = ()
) -> SwitchboardConfig:
    """The config, or a ConfigError listing every problem. `skip`: key paths whose problems
    are not listed (they use an environment variable that is not set, said apart)."""
    work = data  # copied at the first failure, before a part is taken out
    nodes: list[tuple[Any, tuple[Any, ...]]] = []
    origin: dict[int, tuple[Any, ...]] = {}  # a node of the copy -> its key path in the file
    structural: list[ErrorDetails] = []
    renamed: dict[tuple[Any, ...], tuple[Any, ...]] = {}  # each key read as -> as written
    taken: list[tuple[Any, ...]] = []  # original key paths of the parts taken out
    dropped: set[str] = set()  # the ids of the objects taken out whole
    found: list[Problem] = []
    config: SwitchboardConfig | None = None
    for attempt in range(MAX_PASSES):
        found = []
        try:
            config = SwitchboardConfig.model_validate(work, context={SINK: found})
            break
        except ValidationError as exc:
            errors = exc.errors()
            if attempt == 0:
                structural = errors
                work = copy.deepcopy(data)
                nodes = list(_nodes(work, ()))  # held: no id is reused while `origin` is read
                origin = {id(node): where for node, where in nodes}
                renamed = _rename_misspelt(work, errors)
            handled = {*renamed, *renamed.values()} if attempt == 0 else set()
            if not _take_out(work, errors, origin, taken, dropped, handled) and not handled:
                break
    kept = [
        e
        for e in structural
        if not (e["type"] == "missing" and tuple(e["loc"]) in renamed)
        and not _under(tuple(e["loc"]), skip)
    ]
    lines = [_structural_line(e, data, text) for e in kept]
    for problem in found:
        where = _original(work, problem.where, origin)
        if _derived(problem, where, taken, dropped) or _under(where, skip):
            continue
        lines.append(_line(where, problem.what, data, text, renamed.get(where, where)))
    if not lines and config is not None:
        return config
    raise ConfigError("\n".join([f"{path}: {len(lines)} problem(s):", *lines]))


def _nodes(node: Any, where: tuple[Any, ...]) -> Iterable[tuple[Any, tuple[Any, ...]]]:
    if isinstance(node, dict):
        yield node, where
        for key, value in node.items():
            yield from _nodes(value, (*where, key))
    elif isinstance(node, list):
        yield node, where
        for i, value in enumerate(node):
            yield from _nodes(value, (*where, i))


def _walk(data: Any, loc: tuple[Any, ...]) -> list[tuple[Any, Any]]:
    """(container, key) for each part of `loc` that is there, from the top."""
    steps: list[tuple[Any, Any]] = []
    node = data
    for part in loc:
        if (isinstance(node, dict) and part in node) or (
            isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        ):
            pass
        else:
            break
        steps.append((node, part))
        node = node[part]
    return steps


def _take_out(
    work: dict[str, Any],
    errors: list[ErrorDetails],
    origin: dict[int, tuple[Any, ...]],
    taken: list[tuple[Any, ...]],
    dropped: set[str],
    renamed: set[tuple[Any, ...]],
) -> bool:
    """Each error's deepest part that is there taken out of `work`; False if none could be."""
    done = False
    for error in errors:
        loc = tuple(error["loc"])
        if loc in renamed:
            continue
        steps = _walk(work, loc)
        if not steps:
            continue
        container, key = steps[-1]
        node = container[key]
        if node is GONE:
            continue
        where = origin.get(id(container))
        if where is not None:
            taken.append((*where, key))
        if isinstance(node, dict):
            name = node.get("id", node.get("name"))
            if isinstance(name, str):
                dropped.add(name)
        container[key] = GONE
        done = True
    _compact(work)
    return done


def _compact(node: Any) -> None:
    if isinstance(node, dict):
        for key in [k for k, v in node.items() if v is GONE]:
            del node[key]
        for value in node.values():
            _compact(value)
    elif isinstance(node, list):
        node[:] = [v for v in node if v is not GONE]
        for value in node:
            _compact(value)


def _rename_misspelt(
    work: dict[str, Any], errors: list[ErrorDetails]
) -> dict[tuple[Any, ...], tuple[Any, ...]]:
    """An unknown key beside a missing one it is a misspelling of (`default_agnet` for
    `default_agent`) is read as that key, so the object is still checked with the rest.
    Returns each key so read, by the key as written (the missing key's error is said by
    the unknown key's)."""
    missing: dict[tuple[Any, ...], list[str]] = {}
    for e in errors:
        if e["type"] == "missing" and isinstance(e["loc"][-1], str):
            missing.setdefault(tuple(e["loc"][:-1]), []).append(str(e["loc"][-1]))
    renamed: dict[tuple[Any, ...], tuple[Any, ...]] = {}
    for e in errors:
        loc = tuple(e["loc"])
        if e["type"] != "extra_forbidden" or loc[:-1] not in missing:
            continue
        close = get_close_matches(str(loc[-1]), missing[loc[:-1]], n=1, cutoff=0.6)
        steps = _walk(work, loc)
        if not close or len(steps) != len(loc):
            continue
        container, key = steps[-1]
        container[close[0]] = container.pop(key)
        missing[loc[:-1]].remove(close[0])
        renamed[(*loc[:-1], close[0])] = loc
    return renamed


def _original(
    work: dict[str, Any], where: tuple[Any, ...], origin: dict[int, tuple[Any, ...]]
) -> tuple[Any, ...]:
    """A key path in the pruned `work` (a workspace named by its id) as a path in the file."""
    if where[:1] == ("workspaces",) and len(where) > 1 and isinstance(where[1], str):
        ids = [w.get("id") if isinstance(w, dict) else None for w in work.get("workspaces", [])]
        where = ("workspaces", ids.index(where[1]), *where[2:]) if where[1] in ids else where
    steps = _walk(work, where)
    nodes = [work, *(container[key] for container, key in steps)]  # after 0, 1, ... parts
    for n in range(len(nodes) - 1, -1, -1):
        found = origin.get(id(nodes[n]))
        if found is not None:
            return (*found, *where[n:])
    return where


def _derived(
    problem: Problem, where: tuple[Any, ...], taken: list[tuple[Any, ...]], dropped: set[str]
) -> bool:
    """A problem that may only follow from a part taken out: it names an object taken out,
    or its key (more precise than a workspace) holds a part taken out."""
    if any(repr(name) in problem.what for name in dropped):
        return True
    return len(where) > 2 and any(t[: len(where)] == where for t in taken)


def _under(loc: tuple[Any, ...], paths: Iterable[tuple[Any, ...]]) -> bool:
    return any(loc[: len(p)] == p for p in paths)


def _structural_line(error: ErrorDetails, data: dict[str, Any], text: str) -> str:
    loc = tuple(error["loc"])
    kind = error["type"]
    if kind == "extra_forbidden":
        close = get_close_matches(str(loc[-1]), _fields_at(loc[:-1]), n=1, cutoff=0.6)
        fix = (
            f"unknown key; did you mean {close[0]}?"
            if close
            else f"unknown key: check its spelling against {EXAMPLE}"
        )
    elif kind == "missing":
        fix = "required key is missing"
    else:
        fix = str(error["msg"]).removeprefix("Value error, ")
    return _line(loc, fix, data, text)


def _line(
    loc: tuple[Any, ...], what: str, data: dict[str, Any], text: str, written: tuple[Any, ...] = ()
) -> str:
    """`written`: where the key is in the file, if not at `loc` (a misspelt key's)."""
    line = line_of(text, written or loc)
    at = f" (line {line})" if line else ""
    return f"  - {path_text(loc)}{_label(data, loc)}: {what}{at}"


def _fields_at(loc: tuple[Any, ...]) -> list[str]:
    """The keys the model at `loc` takes (none known: [])."""
    model: Any = SwitchboardConfig
    for part in loc:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(part) if _is_model(model) else None
        if field is None:
            return []
        model = _model_in(field.annotation)
        if model is None:
            return []
    return list(model.model_fields) if _is_model(model) else []


def _is_model(kind: Any) -> bool:
    return isinstance(kind, type) and issubclass(kind, BaseModel)


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The model a field's type holds (itself, or in a list, an Optional or a dict)."""
    if _is_model(annotation):
        return annotation  # type: ignore[no-any-return]
    if get_origin(annotation) in (list, dict, Union, UnionType) or get_args(annotation):
        for arg in get_args(annotation):
            found = _model_in(arg)
            if found is not None:
                return found
    return None


def _label(data: Any, loc: tuple[Any, ...]) -> str:
    """` ("acme")` when the path goes through a list of things with ids."""
    node = data
    labels = []
    for part in loc:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            break
        if isinstance(part, int) and isinstance(node, dict) and ("id" in node or "name" in node):
            labels.append(f'"{node.get("id", node.get("name"))}"')
    return f" ({', '.join(labels)})" if labels else ""


_ARRAY = re.compile(r"^\[\[\s*([^\]]+?)\s*\]\]")
_TABLE = re.compile(r"^\[\s*([^\]]+?)\s*\]")
_KEY = re.compile(r"^([A-Za-z0-9_\-\.\"' ]+?)\s*=")


def line_of(text: str, loc: tuple[Any, ...]) -> int | None:
    """The line of the file where `loc` (or the nearest part above it) is written: a best
    reading of tables, arrays of tables and `key =` lines; None when not found."""
    lines = _lines(text)
    for n in range(len(loc), 0, -1):
        if loc[:n] in lines:
            return lines[loc[:n]]
    return None


def _names(text: str) -> tuple[str, ...]:
    return tuple(part.strip().strip("\"'") for part in text.split("."))


def _lines(text: str) -> dict[tuple[Any, ...], int]:
    found: dict[tuple[Any, ...], int] = {}
    index: dict[tuple[str, ...], int] = {}  # an array of tables' names -> its current item

    def concrete(names: tuple[str, ...]) -> tuple[Any, ...]:
        out: list[Any] = []
        for n in range(len(names)):
            out.append(names[n])
            if names[: n + 1] in index:
                out.append(index[names[: n + 1]])
        return tuple(out)

    current: tuple[Any, ...] = ()
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if match := _ARRAY.match(line):
            names = _names(match.group(1))
            index[names] = index.get(names, -1) + 1
            for inner in [k for k in index if len(k) > len(names) and k[: len(names)] == names]:
                del index[inner]
        elif match := _TABLE.match(line):
            names = _names(match.group(1))
        elif match := _KEY.match(line):
            found.setdefault((*current, *_names(match.group(1))), number)
            continue
        else:
            continue
        current = concrete(names)
        for n in range(1, len(current) + 1):  # a table's line is its parents' too, if first
            found.setdefault(current[:n], number)
    return found
