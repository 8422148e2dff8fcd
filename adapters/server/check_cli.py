"""`switchboard check-config`: the file validated and summarized (what it runs, where, for
whom), the paired operators of its SQLite file, and with `--probe` every credential tried."""

from __future__ import annotations

import argparse
import asyncio
import shlex
from datetime import UTC, datetime
from pathlib import Path

from adapters.platforms import platforms
from adapters.server.check_schedules import schedule_line, trigger_line
from adapters.server.check_spend import budget_line, price_line
from config import SwitchboardConfig
from config.loading import variables
from config.mcp import McpServerConfig, shown_url
from config.platform_sections import sections
from config.providers import Connection
from config.schema import ToolConfig, WorkspaceConfig


def check_config_command(args: argparse.Namespace, path: Path, config: SwitchboardConfig) -> int:
    """0: the file is right (and, with --probe, every credential works); 1: a probe failed."""
    print(summary(path, config))
    if not config.storage.shared and Path(config.storage.path).exists():
        print("\n".join(asyncio.run(paired_operators(config))))
    if not getattr(args, "probe", False):
        return 0
    from adapters.server.probe import probe

    lines, ok = asyncio.run(probe(config))
    print("\n".join(["probes:", *lines]))
    return 0 if ok else 1


def summary(path: Path, config: SwitchboardConfig) -> str:
    lines = [
        f"{path}: OK",
        f"provider: {_connection_line(config.provider)}",
        *(f"providers.{name}: {_connection_line(c)}" for name, c in config.providers.items()),
        price_line(config),
        f"storage: {config.storage.described}"
        + (
            f" (replicas may share it: one active, the others standby; lease"
            f" {config.storage.lease_ttl_s:g} s)"
            if config.storage.shared
            else " (one process)"
        ),
        f"http: {config.server.host}:{config.server.port}",
        f"logs: {_log_destination(config)}",
        f"admin console: {_console_line(config)}",
        "environment variables used: " + (", ".join(variables(path)) or "none"),
    ]
    for w in config.workspaces:
        lines += _workspace_lines(w, config)
    return "\n".join(lines)


def _workspace_lines(w: WorkspaceConfig, config: SwitchboardConfig) -> list[str]:
    """What one workspace runs, where and for whom."""
    surfaces = [s.name for s in sections() if s.of(w) is not None] + ["console"] * bool(w.console)
    lines = [f"workspace {w.id}: {', '.join(surfaces)}; queue mode {w.queue_mode}"]
    lines += [line for platform in platforms() for line in platform.describe(w, config)]
    lines += [f"  operator {o.id}{' (primary)' if o.primary else ''}" for o in w.operators]
    for a in w.agents:
        default = " (default)" if a.id == w.default_agent else ""
        chain = ", then ".join(
            f"{link.name} {link.connection.model}" for link in config.chain_of(w, a)
        )
        lines.append(f"  agent {a.id}{default}: tools {', '.join(a.tools)}; model {chain}")
    lines += _binding_lines(w)
    lines += [_tool_line(t) for t in w.tools]
    lines += [_mcp_line(m) for m in w.mcp_servers]
    lines += [schedule_line(s, datetime.now(UTC)) for s in w.schedules]
    lines += [trigger_line(w.id, t, config.server.public_url) for t in w.triggers]
    lines += [budget_line(b, w.timezone) for b in w.budgets]
    return lines


def _connection_line(c: Connection) -> str:
    """Where a connection reaches its model (nothing of its keys)."""
    if c.kind == "offline":
        return "offline (no key needed)"
    where = f" in {c.region}" if c.region else ""
    where += f", project {c.project_id}" if c.project_id else ""
    where += f" at {shown_url(c.base_url)}" if c.base_url else ""
    return f"{c.kind} ({c.model}){where}"


def _tool_line(t: ToolConfig) -> str:
    asks = f", approval within {t.approval_timeout_s:g}s" if t.requires_approval else ""
    return f"  tool {t.name}: {shlex.join(t.command)} (timeout {t.timeout_s:g}s{asks})"


def _mcp_line(m: McpServerConfig) -> str:
    how = f"HTTP {shown_url(m.url)}" if m.url else f"stdio {shlex.join([m.command or '', *m.args])}"
    asks = ""
    if m.requires_approval:
        named = m.requires_approval
        which = "all tools" if named is True else ", ".join(named)
        asks = f", approval of {which} within {m.approval_timeout_s:g}s"
    return f"  mcp server {m.name}: {how} (timeout {m.timeout_s:g}s{asks})"


def _console_line(config: SwitchboardConfig) -> str:
    if not config.console_enabled():
        return "off (set [admin] token or [[workspaces.admins]] to turn it on)"
    base = config.server.public_url or f"http://{config.server.host}:{config.server.port}"
    who = ["the global admin"] if config.admin.token is not None else []
    who += [f"{len(w.admins)} admin(s) of {w.id}" for w in config.workspaces if w.admins]
    return f"{base.rstrip('/')}/admin for {', '.join(who)}"


def _binding_lines(w: WorkspaceConfig) -> list[str]:
    """Who answers where, and when in groups and channels."""
    everywhere = ", ".join(w.respond_to or ["all"])
    lines = [f"  in groups and channels, answers operators' messages: {everywhere}"]
    for b in w.bindings:
        when = f" (answers: {', '.join(b.respond_to)})" if b.respond_to else ""
        lines.append(f"  {b.place.describe()} -> agent {b.agent}{when}")
    return lines


def _log_destination(config: SwitchboardConfig) -> str:
    settings = config.logging
    console = any(w.console and w.console.enabled for w in config.workspaces)
    file = settings.file or (
        str(Path(config.storage.path).parent / "switchboard.log") if console else None
    )
    where = [] if console else ["stderr"]
    if file:
        where.append(f"{file} (rotated at {settings.max_bytes} bytes, {settings.backups} kept)")
    return f"{' and '.join(where)}, level {settings.level}"


async def paired_operators(config: SwitchboardConfig) -> list[str]:
    """The senders paired by DM beside the file's operators (from the SQLite file, when it
    exists; on PostgreSQL `switchboard status` says, as check-config stays offline)."""
    from bridge.store.pairing import PairingStore
    from bridge.store.schema import MIGRATIONS as BRIDGE_MIGRATIONS
    from runtime.store.store import Store

    store = await Store.open(
        config.storage.location, extra_migrations={"bridge": BRIDGE_MIGRATIONS}, exclusive=False
    )
    try:
        paired = await PairingStore(store).all_paired()
    finally:
        await store.close()
    return [f"paired operators (DM pairing): {len(paired)}"] + [
        f"  workspace {p.workspace_id}: {p.platform} {p.sender_id} ({p.sender_name or 'no name'})"
        for p in paired
    ]
