"""Reading the admin's file: TOML, `${NAME}` from the environment, validation, and errors
that name the file, the key path and the fix."""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from config.errors import ConfigError
from config.problems import path_text
from config.report import validate
from config.schema import SwitchboardConfig

DEFAULT_PATH = Path("config/switchboard.toml")
ENV_PATH = "SWITCHBOARD_CONFIG"
# `${NAME}` is filled from the environment; `$${NAME}` is the literal text `${NAME}`.
_VARIABLE = re.compile(r"\$(\$?)\{([A-Za-z_][A-Za-z0-9_]*)\}")
_FILLED = re.compile(r"\$(?=\{[A-Za-z_][A-Za-z0-9_]*\})")  # the `$` of each `${NAME}`
# In place of an unset secret where none is used: passes for a token (long, URL-safe).
STAND_IN = "unset-in-this-environment"


@dataclass(frozen=True, slots=True)
class _Unset:
    name: str
    where: tuple[Any, ...]  # the key that uses it

    def __str__(self) -> str:
        return f"{self.name} (used by {_key_path(self.where)})"


def literal(text: str) -> str:
    """`text` as a value in the file that loads as `text` itself: each `${NAME}` escaped."""
    return _FILLED.sub("$$", text)


def resolve_path(cli_path: str | None, environ: Mapping[str, str] = os.environ) -> Path:
    """--config PATH, else $SWITCHBOARD_CONFIG, else config/switchboard.toml."""
    return Path(cli_path or environ.get(ENV_PATH) or DEFAULT_PATH)


def load(path: Path, environ: Mapping[str, str] = os.environ) -> SwitchboardConfig:
    """The config at `path`; `${NAME}`s come from the environment, else from the env file
    beside it (`bot.toml` -> `bot.env`, as `switchboard init` writes it), if there is one."""
    return parse(read_text(path), path, {**env_file(path), **environ})


def load_for_reading(
    path: Path, environ: Mapping[str, str] = os.environ
) -> tuple[SwitchboardConfig, list[str]]:
    """The config for a command that only reads the store (`status`), and the variables it
    uses that are unset here. Those are tokens and keys such a command never sends, so each
    is filled with a stand-in; one that `[storage]` uses is still an error (the store is what
    it reads), and so is any the stand-in does not pass for."""
    environ = {**env_file(path), **environ}
    text = read_text(path)
    unset: list[_Unset] = []
    _expand(_toml(text, path), environ, (), unset)
    if not unset or any(u.where[:1] == ("storage",) for u in unset):
        return parse(text, path, environ), []
    stand_ins = {u.name: STAND_IN for u in unset}
    try:
        config = parse(text, path, {**environ, **stand_ins})
    except ConfigError:  # a stand-in is not a value this key takes: the variable is needed
        return parse(text, path, environ), []  # raises, naming the unset variables
    return config, sorted(stand_ins)


def env_file_of(path: Path) -> Path:
    return path.with_suffix(".env")


def env_file(path: Path) -> dict[str, str]:
    """`NAME=value` lines of the env file beside the config (blank lines and `#` comments
    skipped; a value may be quoted); {} when there is none."""
    file = env_file_of(path)
    if not file.is_file():
        return {}
    found: dict[str, str] = {}
    for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, equals, value = line.removeprefix("export ").partition("=")
        if not equals or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name.strip()):
            raise ConfigError(f"{file}:{number}: expected NAME=value")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        found[name.strip()] = value
    return found


def parse(text: str, path: Path, environ: Mapping[str, str] = os.environ) -> SwitchboardConfig:
    """Validate config text; `path` only names the source in error messages."""
    missing: list[_Unset] = []
    expanded = _expand(_toml(text, path), environ, (), missing)
    if not missing:
        return validate(expanded, path, text)
    unset = "\n".join(
        [f"{path}: {len(missing)} environment variable(s) not set:"]
        + [f"  - {unset}" for unset in missing]
        + ["Set them, or write the values in the file ($${NAME} is a literal ${NAME})."]
    )
    try:  # the rest of the file checked too, each unset variable's keys aside
        validate(expanded, path, text, skip=[u.where for u in missing])
    except ConfigError as exc:
        raise ConfigError(f"{unset}\n{exc}") from None
    raise ConfigError(unset)


def variables(path: Path) -> list[str]:
    """The environment variables a config file uses (`${NAME}`), sorted, each once."""
    names: set[str] = set()

    def collect(value: Any) -> None:
        if isinstance(value, dict):
            for item in value.values():
                collect(item)
        elif isinstance(value, list):
            for item in value:
                collect(item)
        elif isinstance(value, str):
            names.update(m.group(2) for m in _VARIABLE.finditer(value) if not m.group(1))

    collect(_toml(read_text(path), path))
    return sorted(names)


def read_text(path: Path) -> str:
    """The file's text, or a ConfigError saying why it cannot be read."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file. Pass --config PATH or set {ENV_PATH}.") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start}).") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read ({exc.strerror}).") from None


def _toml(text: str, path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{path}: not valid TOML: arrays or tables nested too deeply") from None


def _expand(
    value: Any, environ: Mapping[str, str], where: tuple[Any, ...], missing: list[_Unset]
) -> Any:
    """Fill `${NAME}`s; each use of an unset variable is added to `missing`."""
    if isinstance(value, dict):
        return {k: _expand(v, environ, (*where, k), missing) for k, v in value.items()}
    if isinstance(value, list):
        return [_expand(v, environ, (*where, i), missing) for i, v in enumerate(value)]
    if isinstance(value, str):

        def fill(match: re.Match[str]) -> str:
            escaped, name = match.groups()
            if escaped:
                return f"${{{name}}}"
            if name not in environ:
                missing.append(_Unset(name, where))
                return ""
            return environ[name]

        return _VARIABLE.sub(fill, value)
    return value


def _key_path(where: tuple[Any, ...]) -> str:
    return path_text(where)
