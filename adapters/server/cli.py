"""The `switchboard` command: run, check-config, status, reload."""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import os
import shlex
import signal
import sys
from importlib.metadata import version
from pathlib import Path

from adapters.server import logs
from adapters.server.init_cli import add_parser as add_init_parser
from adapters.server.pairing_cli import add_parser as add_pairing_parser
from config import DEFAULT_PATH, ENV_PATH, SwitchboardConfig, load, resolve_path
from config.errors import SwitchboardError
from config.loading import variables
from config.mcp import shown_url
from config.schema import WorkspaceConfig
from config.secrets import Secrets, known_secrets

log = logging.getLogger(__name__)


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except BrokenPipeError:  # `switchboard status | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


def _main(argv: list[str] | None) -> int:
    args = _parser().parse_args(argv)
    path = resolve_path(getattr(args, "config", None))
    if args.command == "init":  # there is no config to load yet
        from adapters.server.init_cli import init_command

        return init_command(args, path)
    try:
        config = load(path)
        if args.command == "check-config":
            print(summary(path, config))
            if not config.storage.shared and Path(config.storage.path).exists():
                print("\n".join(asyncio.run(paired_operators(config))))
            if not getattr(args, "probe", False):
                return 0
            from adapters.server.probe import probe

            lines, ok = asyncio.run(probe(config))
            print("\n".join(["probes:", *lines]))
            return 0 if ok else 1
        if args.command == "reload":
            from adapters.server.reload_cli import reload_command

            return reload_command(path, config)
        if args.command == "pairing":
            from adapters.server.pairing_cli import pairing_command

            return pairing_command(args, config)
        if args.command == "status":
            from adapters.server.status_cli import status_command

            return status_command(config)
        console = any(w.console and w.console.enabled for w in config.workspaces)
        secrets = known_secrets(config, path)  # the logs' and the App's: one set, one mask
        settings = config.logging
        if getattr(args, "log_format", None):  # the command line's word over the file's
            settings = settings.model_copy(update={"format": args.log_format})
        log_file = logs.configure(
            settings,
            secrets=secrets,
            to_stderr=not console,
            default_file=Path(config.storage.path).parent / "switchboard.log",
        )
        if log_file is not None and console:
            print(f"Logs go to {log_file}.", flush=True)
        try:
            return asyncio.run(run(config, path, secrets))
        except Exception as exc:
            if isinstance(exc, SwitchboardError):
                raise
            # Through the log, where secrets are redacted, never as a bare traceback.
            log.critical("switchboard stopped on an unexpected error", exc_info=True)
            print(
                f"switchboard: stopped on an unexpected error ({type(exc).__name__});"
                f" the log ({log_file or 'stderr'}) has the details",
                file=sys.stderr,
            )
            return 1
    except SwitchboardError as exc:  # a config error, a database another process holds, ...
        print(f"switchboard: {exc}", file=sys.stderr)
        return 2


def _parser() -> argparse.ArgumentParser:
    """`--config` is taken before or after the subcommand: `switchboard --config F run` and
    `switchboard run --config F` mean the same (the latter wins if both are given)."""
    config = argparse.ArgumentParser(add_help=False)
    config.add_argument(
        "--config",
        metavar="PATH",
        default=argparse.SUPPRESS,
        help=f"the config file (else ${ENV_PATH}, else {DEFAULT_PATH})",
    )
    parser = argparse.ArgumentParser(
        prog="switchboard", description="Run AI agents from Slack and Telegram.", parents=[config]
    )
    parser.add_argument(
        "--version", action="version", version=f"switchboard {version('switchboard')}"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, text in (
        ("run", "serve every configured workspace in one process, until SIGTERM or Ctrl-C"),
        ("check-config", "validate the config file and summarize it; exit 2 if it is wrong"),
        ("status", "whether Switchboard runs, what each session does now, what failed"),
        ("reload", "check the config file, then have the running process apply it (SIGHUP)"),
    ):
        command = sub.add_parser(name, parents=[config], help=text, description=text)
        if name == "reload":
            add_pairing_parser(sub, config)
            add_init_parser(sub, config)
        if name == "run":
            command.add_argument(
                "--log-format",
                choices=("text", "json"),
                default=None,
                help=(
                    "text: a line per event for people; json: one JSON object per line, for "
                    "a log collector (default: [logging] format in the config, else text)"
                ),
            )
        if name == "check-config":
            command.add_argument(
                "--probe",
                action="store_true",
                help=(
                    "also try the credentials and servers the file names (bot tokens, the "
                    "model key, MCP servers); exit 1 if one fails"
                ),
            )
    return parser


def summary(path: Path, config: SwitchboardConfig) -> str:
    lines = [
        f"{path}: OK",
        f"provider: {config.provider.kind} ({config.provider.model})"
        if config.provider.kind == "anthropic"
        else "provider: offline (no key needed)",
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
        surfaces = [name for name in ("slack", "telegram", "console") if getattr(w, name)]
        lines.append(f"workspace {w.id}: {', '.join(surfaces)}; queue mode {w.queue_mode}")
        if w.slack is not None:
            base = config.server.public_url or f"http://{config.server.host}:{config.server.port}"
            ways = ["Socket Mode"] if w.slack.app_token else []
            if w.slack.signing_secret:
                ways.append(f"HTTP at {base.rstrip('/')}/slack/events")
            lines.append(f"  slack team {w.slack.team_id}: events by {' and '.join(ways)}")
        for o in w.operators:
            lines.append(f"  operator {o.id}{' (primary)' if o.primary else ''}")
        for a in w.agents:
            default = " (default)" if a.id == w.default_agent else ""
            lines.append(f"  agent {a.id}{default}: tools {', '.join(a.tools)}")
        lines += _binding_lines(w)
        for t in w.tools:
            asks = f", approval within {t.approval_timeout_s:g}s" if t.requires_approval else ""
            lines.append(
                f"  tool {t.name}: {shlex.join(t.command)} (timeout {t.timeout_s:g}s{asks})"
            )
        for m in w.mcp_servers:
            how = (
                f"HTTP {shown_url(m.url)}"
                if m.url
                else f"stdio {shlex.join([m.command or '', *m.args])}"
            )
            asks = ""
            if m.requires_approval:
                named = m.requires_approval
                which = "all tools" if named is True else ", ".join(named)
                asks = f", approval of {which} within {m.approval_timeout_s:g}s"
            lines.append(f"  mcp server {m.name}: {how} (timeout {m.timeout_s:g}s{asks})")
    return "\n".join(lines)


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
    if w.slack is not None:
        lines.append(f"  slack slash command: {w.slack.slash_command}")
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
    from bridge.store import MIGRATIONS as BRIDGE_MIGRATIONS
    from bridge.store.pairing import PairingStore
    from runtime.store import Store

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


async def run(
    config: SwitchboardConfig, path: Path | None = None, secrets: Secrets | None = None
) -> int:
    from adapters.server.app import App
    from adapters.server.reloading import on_sighup

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    app = App(config, stdin=sys.stdin, stdout=sys.stdout, path=path, doors=True, secrets=secrets)
    started = on_sighup(app.reload, config.storage.path, path)
    await app.start()
    started.set()
    # Everything built so far (modules, clients, config) lives as long as the process. Frozen,
    # a full garbage collection no longer walks it: that walk paused the loop for about 130 ms
    # under load, enough to push Slack acks past their p99 budget (docs/benchmarks.md).
    gc.freeze()
    print(banner(config, app.port), flush=True)
    if config.storage.shared:
        print(replica_line(config, app.replica, app.active), flush=True)
    try:
        await app.wait(stop)
    finally:
        await app.stop()
    print("Switchboard stopped; queued work resumes on the next start.", flush=True)
    return 0


def replica_line(config: SwitchboardConfig, replica: str, active: bool) -> str:
    where = config.storage.described
    if active:
        return f"Replica {replica} on {where}: active (it runs the turns and sends the replies)."
    return (
        f"Replica {replica} on {where}: standby (its doors store what comes in for the active"
        " replica; it takes over when that one's lease runs out)."
    )


def banner(config: SwitchboardConfig, port: int) -> str:
    model = "the offline model" if config.provider.kind == "offline" else config.provider.model
    lines = [f"Switchboard is running with {model}; http on {config.server.host}:{port}."]
    if config.console_enabled():
        host = config.server.host
        if host in ("0.0.0.0", "::", ""):  # every interface: this machine's own is one
            host = "[::1]" if host == "::" else "127.0.0.1"
        elif ":" in host:  # an IPv6 address
            host = f"[{host}]"
        base = config.server.public_url or f"http://{host}:{port}"
        lines.append(f"Admin console: {base.rstrip('/')}/admin (log in with an admin token).")
    if any(w.console for w in config.workspaces):
        lines.append(
            "Type a message and press Enter (a paste of several lines is one message; Alt-Enter"
            " starts a new line, Up recalls earlier ones). Try: work 5 (then type while it"
            " works), notify hello, spawn check the disk, /help. Ctrl-C stops the agent's turn;"
            " Ctrl-D quits."
        )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
