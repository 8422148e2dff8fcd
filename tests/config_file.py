"""A Switchboard config file for tests and benchmarks, written from keyword arguments: each
says only what it needs (a platform, operators, tools), and the rest is one template.

Sections are plain dicts with the file's own keys (see config/schema.py); a key whose value
is None is left out, so that the config's default applies.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from runtime.tools.command import CommandToolSpec

Table = Mapping[str, Any]
OFFLINE: Table = {"kind": "offline"}
AGENT = "assistant"  # every workspace's one agent, its default


def anthropic(base_url: str, *, api_key: str = "test-key") -> Table:
    """The Anthropic provider, pointed at a fake API."""
    return {
        "kind": "anthropic",
        "model": "claude-test-model",
        "api_key": api_key,
        "base_url": base_url,
        "prices": {"claude-test-model": {"input": 3.0, "output": 15.0}},  # as Sonnet's
    }


def workspace(
    id: str,
    operators: Sequence[Table],
    *,
    telegram: Table | None = None,
    slack: Table | None = None,
    console: str | None = None,
    queue_mode: str | None = None,
    agent_tools: Sequence[str] | None = None,
    system_prompt: str | None = None,
    tools: Sequence[CommandToolSpec] = (),
) -> Table:
    """One `[[workspaces]]` entry with one agent, `assistant`. `console` names the operator of
    a console chat; `agent_tools` are the agent's tools (else the config's default), `tools`
    the workspace's command tools."""
    return {
        "id": id,
        "queue_mode": queue_mode,
        "default_agent": AGENT,
        "telegram": telegram,
        "slack": slack,
        "console": {"operator": console} if console else None,
        "operators": operators,
        "agents": [{"id": AGENT, "system_prompt": system_prompt, "tools": agent_tools}],
        "tools": [
            {
                "name": t.name,
                "description": t.description,
                "command": list(t.command),
                "timeout_s": t.timeout_s,
                **(
                    {"requires_approval": True, "approval_timeout_s": t.approval.timeout_s}
                    if t.approval
                    else {}
                ),
            }
            for t in tools
        ]
        or None,
    }


def write_config(
    path: Path,
    *,
    db: Path | str,
    workspaces: Sequence[Table],
    provider: Table = OFFLINE,
    port: int | None = 0,
    public_url: str | None = None,
    logging: Table | None = None,
    admin: Table | None = None,
    storage: Table | None = None,
    server: Table | None = None,
    queue: Table | None = None,
    providers: Table | None = None,
) -> Path:
    """Write the config file at `path` and return it. `port` None: no `[server]` table (for a
    bridge that never serves HTTP); `admin`: the `[admin]` table; `storage`: more keys of
    `[storage]` (the lease's time to live); `server`: more keys of `[server]`; `providers`:
    the `[providers.<name>]` entries."""
    if port is not None:
        server = {"port": port, "public_url": public_url, **(server or {})}
    document = {
        "server": server if port is not None else None,
        "storage": {
            **({"url": db} if isinstance(db, str) and "://" in db else {"path": db}),
            **(storage or {}),
        },
        "provider": provider,
        "providers": providers,
        "logging": logging,
        "admin": admin,
        "queue": queue,
        "workspaces": workspaces,
    }
    path.write_text("\n".join(_table(document, "")) + "\n", encoding="utf-8")
    return path


def _table(table: Table, prefix: str) -> list[str]:
    """TOML lines: a table's values first, then its sub-tables and arrays of tables."""
    present = {k: v for k, v in table.items() if v is not None}
    lines = [f"{_key(k)} = {_value(v)}" for k, v in present.items() if not _nested(v)]
    for key, value in present.items():
        name = prefix + _key(key)
        if isinstance(value, Mapping):
            lines += ["", f"[{name}]", *_table(value, name + ".")]
        elif _nested(value):
            for item in value:
                lines += ["", f"[[{name}]]", *_table(item, name + ".")]
    return lines


def _nested(value: Any) -> bool:
    """A sub-table, or a non-empty array of tables."""
    return isinstance(value, Mapping) or (
        isinstance(value, list | tuple) and bool(value) and isinstance(value[0], Mapping)
    )


def _key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    return json.dumps(str(value))  # a JSON string is a TOML basic string
