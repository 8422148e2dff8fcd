"""The health of what a workspace depends on beside its models, in words (issue 43): each MCP
server (running, or which failed, why, and how to fix it) and each platform connection
(Telegram polling or webhook, Slack Socket Mode or HTTP: connected, or down or refusing its
token, why and how to fix it). Read live by `/status` (`bridge/status.py`) and the console,
and kept in the store by `HealthKeeper` (`bridge/health_keeper.py`) for `switchboard status`,
another process."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from bridge.connections import Connection
from config.schema import WorkspaceConfig
from runtime.engine import Runtime

FAILING_FOR_S = 120.0  # a call failed within this, and none succeeded since: it is failing

MCP_RUNNING = "MCP server {name}: running, {tools} tool(s)."
MCP_FAILED = "MCP server {name} {failed}: {why}. To fix: {fix}. It is tried again by itself."
MCP_NOT_STARTED = "MCP server {name}: not started yet."
PLATFORM_UP = "{platform} ({mode}): connected."
PLATFORM_FAILING = "{platform} ({mode}) is failing: {why}. To fix: {fix}."
PLATFORM_DOWN = "{platform} ({mode}) is down: {why}. To fix: {fix}."
NOT_HERE = "not running here."
PLATFORM_NOT_RUNNING = "{platform} ({mode}): " + NOT_HERE
ALL_WELL = "Working: {names}."
KEPT = "  Connections and MCP servers (as the running process found them {ago} ago):"
KEPT_STOPPED = "  Connections and MCP servers when it last ran ({ago} ago):"
KEPT_LINE = "    - {words}"
PLATFORM_NAMES = {"telegram": "Telegram", "slack": "Slack", "console": "Terminal"}


@dataclass(frozen=True, slots=True)
class HealthLine:
    subject: str  # "mcp:<server>" or "platform:<platform>:<workspace>"
    workspace_id: str
    ok: bool
    words: str  # one sentence (or two): what, and when not ok why and how to fix it
    name: str  # as a person calls it: "MCP server files", "Telegram (polling)"


@dataclass(frozen=True, slots=True)
class McpState:
    """What the runtime knows of one MCP server (`runtime/tools/mcp.py` `McpServer`)."""

    name: str
    connected: bool
    error: str | None
    tools: int
    ever_connected: bool
    command: str | None
    url: str | None


def mcp_line(workspace_id: str, s: McpState) -> HealthLine:
    subject, name = f"mcp:{s.name}", f"MCP server {s.name}"
    if s.connected:
        return HealthLine(
            subject, workspace_id, True, MCP_RUNNING.format(name=s.name, tools=s.tools), name
        )
    if s.error is None or s.error == "not started":
        return HealthLine(subject, workspace_id, False, MCP_NOT_STARTED.format(name=s.name), name)
    why, fix = _mcp_why(s, workspace_id)
    failed = "stopped working" if s.ever_connected else "failed to start"
    words = MCP_FAILED.format(name=s.name, failed=failed, why=why, fix=fix)
    return HealthLine(subject, workspace_id, False, words, name)


def _mcp_why(s: McpState, workspace_id: str) -> tuple[str, str]:
    """Why, in plain words, and how to fix it."""
    error = s.error or ""
    where = f"MCP server `{s.name}` of workspace {workspace_id} in the config"
    by_hand = f"run `{s.command}` by hand to see why; its own lines are in the log"
    lowered = error.lower()
    if s.url is not None:
        if re.search(r"\b40[13]\b|unauthori[sz]ed|forbidden", lowered):
            return (
                f"{s.url} refused it ({_short(error)})",
                f"set the right token in the `headers` of {where}, then `switchboard reload`",
            )
        if "connect" in lowered or "name or service" in lowered or "refused" in lowered:
            return (
                f"nothing answers at {s.url} ({_short(error)})",
                f"start that server, or correct the `url` of {where}",
            )
        return _short(error), f"check that {s.url} is an MCP server (streamable HTTP)"
    if error.startswith(("FileNotFoundError", "No such file")):
        return (
            f"its command `{s.command}` was not found",
            f"install it, or correct the `command` of {where} (a full path, or one on PATH)",
        )
    if error.startswith("PermissionError"):
        return f"its command `{s.command}` may not be run", f"make it executable ({where})"
    if error.startswith("TimeoutError") or "timed out" in lowered:
        return "it did not answer in time as it started", by_hand
    if "connection closed" in lowered or "stopped answering" in lowered:
        return f"it exited or stopped answering ({_short(error)})", by_hand
    return _short(error), by_hand


def connection_line(
    c: Connection, mode: str, now: float, workspace: WorkspaceConfig | None = None
) -> HealthLine:
    platform = PLATFORM_NAMES.get(c.platform, c.platform)
    subject = f"platform:{c.platform}:{c.workspace_id}"
    name = f"{platform} ({mode})" if mode and mode != "?" else platform
    said = {"platform": platform, "mode": mode}
    failing = (
        c.last_error is not None
        and c.last_error_at is not None
        and now - c.last_error_at <= FAILING_FOR_S
        and (c.last_ok_at is None or c.last_ok_at < c.last_error_at)
        and (c.last_event_at is None or c.last_event_at < c.last_error_at)
    )
    if c.up and not failing:
        return HealthLine(subject, c.workspace_id, True, PLATFORM_UP.format(**said), name)
    if c.last_error is None:
        words = PLATFORM_NOT_RUNNING.format(**said)
        return HealthLine(subject, c.workspace_id, False, words, name)
    why, fix = connection_why(c.platform, c.last_error, c.workspace_id)
    template = PLATFORM_FAILING if c.up else PLATFORM_DOWN
    return HealthLine(
        subject, c.workspace_id, False, template.format(**said, why=why, fix=fix), name
    )


def connection_why(platform: str, error: str, workspace_id: str) -> tuple[str, str]:
    """Why a platform connection fails, in plain words, and how to fix it."""
    lowered = error.lower()
    name = PLATFORM_NAMES.get(platform, platform)
    reload = "then `switchboard reload`"
    token = "`bot_token`" if platform == "telegram" else "`bot_token` (and `app_token`)"
    if re.search(r"\b401\b|unauthori[sz]ed|invalid_auth|not_authed|token_revoked", lowered) or (
        "invalid token" in lowered or "account_inactive" in lowered
    ):
        return (
            f"{name} refuses the bot's token ({_short(error)})",
            f"put a valid {token} in workspace {workspace_id}'s [{platform}] section, {reload}",
        )
    if "409" in lowered or "conflict" in lowered:
        return (
            f"another program takes this bot's updates ({_short(error)})",
            "stop the other process polling with this token (or its webhook), or give this one "
            "its own bot",
        )
    if re.search(
        r"cannot connect|connect(ion)? ?(error|refused|reset)|unreachable|timed? ?out|"
        r"name or service|temporary failure|network",
        lowered,
    ):
        return (
            f"{name} cannot be reached ({_short(error)})",
            "check this machine's network (or proxy); it is tried again by itself",
        )
    return _short(error), "see the log for the details; it is tried again by itself"


def summary(lines: list[HealthLine]) -> list[str]:
    """Short for chat: every problem a line of its own, then what works on one line."""
    problems = [h.words for h in lines if not h.ok]
    well = [h.name for h in lines if h.ok]
    return [*problems, *([ALL_WELL.format(names=", ".join(well))] if well else [])]


def kept_lines(
    kept: list[tuple[str, float]], running: bool, now: float, ago: Callable[[float], str]
) -> list[str]:
    """`switchboard status`: what the running process kept, (words, checked at) each, with
    how fresh it is (`ago`: a duration in words)."""
    if not kept:
        return []
    newest = max(at for _, at in kept)
    head = (KEPT if running else KEPT_STOPPED).format(ago=ago(max(0.0, now - newest)))
    return [head, *(KEPT_LINE.format(words=words) for words, _ in kept)]


def live(
    runtime: Runtime,
    connections: list[Connection],
    listens: Callable[[str], str],
    workspace: WorkspaceConfig,
) -> list[HealthLine]:
    """The workspace's platform connections (not the terminal's) and MCP servers, now."""
    now = runtime.clock.wall()
    lines = [
        connection_line(c, listens(c.platform), now) for c in connections if c.platform != "console"
    ]
    servers = runtime.tools.mcp.servers
    for config in workspace.mcp_servers:
        server = servers.get(config.name)
        if server is None:
            continue
        state = McpState(
            config.name,
            server.connected,
            server.error,
            len(server.tools),
            server.ever_connected,
            server.spec.command,
            server.spec.url,
        )
        lines.append(mcp_line(workspace.id, state))
    return lines


def _short(error: str) -> str:
    first = error.strip().splitlines()[0] if error.strip() else "no reason given"
    return first if len(first) <= 200 else first[:199] + "\u2026"
