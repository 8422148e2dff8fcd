"""Reading the admin's file: TOML, `${NAME}` from the environment, validation, and errors
that name the file, the key path and the fix."""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from config.errors import ConfigError
from config.schema import SwitchboardConfig

DEFAULT_PATH = Path("config/switchboard.toml")
ENV_PATH = "SWITCHBOARD_CONFIG"
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def resolve_path(cli_path: str | None, environ: Mapping[str, str] = os.environ) -> Path:
    """--config PATH, else $SWITCHBOARD_CONFIG, else config/switchboard.toml."""
    return Path(cli_path or environ.get(ENV_PATH) or DEFAULT_PATH)


def load(path: Path, environ: Mapping[str, str] = os.environ) -> SwitchboardConfig:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file. Pass --config PATH or set {ENV_PATH}.") from None
    return parse(text, path, environ)


def parse(text: str, path: Path, environ: Mapping[str, str] = os.environ) -> SwitchboardConfig:
    """Validate config text; `path` only names the source in error messages."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    expanded = _expand(raw, environ, path, ())
    try:
        return SwitchboardConfig.model_validate(expanded)
    except ValidationError as exc:
        raise ConfigError(_describe(path, exc, expanded)) from None


def _expand(value: Any, environ: Mapping[str, str], path: Path, where: tuple[Any, ...]) -> Any:
    if isinstance(value, dict):
        return {k: _expand(v, environ, path, (*where, k)) for k, v in value.items()}
    if isinstance(value, list):
        return [_expand(v, environ, path, (*where, i)) for i, v in enumerate(value)]
    if isinstance(value, str):

        def fill(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in environ:
                raise ConfigError(
                    f"{path}: {_key_path(where)} uses ${{{name}}}, but the environment "
                    f"variable {name} is not set. Set it, or write the value in the file."
                )
            return environ[name]

        return _VARIABLE.sub(fill, value)
    return value


def _key_path(where: tuple[Any, ...]) -> str:
    out = ""
    for part in where:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def _describe(path: Path, exc: ValidationError, data: dict[str, Any]) -> str:
    lines = [f"{path}: {exc.error_count()} problem(s):"]
    for error in exc.errors():
        where = _key_path(tuple(error["loc"]))
        label = _label(data, error["loc"])
        kind = error["type"]
        if kind == "extra_forbidden":
            fix = "unknown key: check its spelling against config/example-full.toml"
        elif kind == "missing":
            fix = "required key is missing"
        else:
            fix = str(error["msg"]).removeprefix("Value error, ")
        lines.append(f"  - {where}{label}: {fix}")
    return "\n".join(lines)


def _label(data: Any, loc: tuple[Any, ...]) -> str:
    """` (workspace "acme")` when the path goes through a list of things with ids."""
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
