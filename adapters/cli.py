"""The `switchboard` command: run, check-config, status."""

from __future__ import annotations

import argparse
import asyncio
import gc
import signal
import sys
from pathlib import Path

from adapters import logs
from adapters.app import App
from bridge.schema import MIGRATIONS as BRIDGE_MIGRATIONS
from bridge.status import undelivered_notifications
from config import ConfigError, SwitchboardConfig, load, resolve_path
from runtime.errors import StoreBusyError
from runtime.store import Store


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="switchboard", description="Run AI agents from Slack and Telegram."
    )
    parser.add_argument(
        "--config", help="config file (else $SWITCHBOARD_CONFIG, else config/switchboard.toml)"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("run", help="serve every configured adapter in one process")
    sub.add_parser("check-config", help="validate the config and summarize it")
    sub.add_parser("status", help="sessions, queues, deliveries, undelivered notifications")
    args = parser.parse_args(argv)
    path = resolve_path(args.config)
    try:
        config = load(path)
        if args.command == "check-config":
            print(summary(path, config))
            return 0
        if args.command == "status":
            print(asyncio.run(status(config)))
            return 0
        logs.configure(Path(config.storage.path).parent / "switchboard.log")
        return asyncio.run(run(config))
    except (ConfigError, StoreBusyError) as exc:
        print(f"switchboard: {exc}", file=sys.stderr)
        return 2


def summary(path: Path, config: SwitchboardConfig) -> str:
    lines = [
        f"{path}: OK",
        f"provider: {config.provider.kind} ({config.provider.model})"
        if config.provider.kind == "anthropic"
        else "provider: offline (no key needed)",
        f"storage: {config.storage.path}",
        f"http: {config.server.host}:{config.server.port}",
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
        for t in w.tools:
            lines.append(f"  tool {t.name}: {' '.join(t.command)} (timeout {t.timeout_s:g}s)")
    return "\n".join(lines)


async def status(config: SwitchboardConfig) -> str:
    store = await Store.open(
        config.storage.path, extra_migrations={"bridge": BRIDGE_MIGRATIONS}, exclusive=False
    )
    try:
        sessions = await store.fetch_all(
            "SELECT s.id, s.agent_id, s.queue_mode,"
            " (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id"
            "   AND m.status IN ('queued', 'dequeued')) AS queued,"
            " (SELECT COUNT(*) FROM runs r WHERE r.session_id = s.id"
            "   AND r.status = 'running') AS running"
            " FROM sessions s ORDER BY s.created_at"
        )
        deliveries = await store.fetch_all(
            "SELECT status, COUNT(*) AS n FROM deliveries GROUP BY status ORDER BY status"
        )
        lines = [f"sessions: {len(sessions)}"]
        lines += [
            f"  {r['id']} {r['agent_id']}: {'running' if r['running'] else 'idle'},"
            f" {r['queued']} queued"
            for r in sessions
            if r["queued"] or r["running"]
        ]
        lines.append(
            "deliveries: " + (", ".join(f"{r['status']} {r['n']}" for r in deliveries) or "none")
        )
        for w in config.workspaces:
            undelivered = await undelivered_notifications(store, w.id)
            lines.append(f"workspace {w.id}: {len(undelivered)} undelivered notification(s)")
            lines += [
                f"  - {u.summary} (from {u.requested_by_agent_id}, {u.status})" for u in undelivered
            ]
        return "\n".join(lines)
    finally:
        await store.close()


async def run(config: SwitchboardConfig) -> int:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    app = App(config, stdin=sys.stdin, stdout=sys.stdout)
    await app.start()
    # Everything built so far (modules, clients, config) lives as long as the process. Frozen,
    # a full garbage collection no longer walks it: that walk paused the loop for about 130 ms
    # under load, enough to push Slack acks past their p99 budget (docs/benchmarks.md).
    gc.freeze()
    print(banner(config, app.port), flush=True)
    try:
        await app.wait(stop)
    finally:
        await app.stop()
    print("Switchboard stopped; queued work resumes on the next start.", flush=True)
    return 0


def banner(config: SwitchboardConfig, port: int) -> str:
    model = "the offline model" if config.provider.kind == "offline" else config.provider.model
    lines = [f"Switchboard is running with {model}; http on {config.server.host}:{port}."]
    if any(w.console for w in config.workspaces):
        lines.append(
            "Type a message and press Enter. Try: work 5 (then type while it works),"
            " notify hello, spawn check the disk, /help. Ctrl-D quits."
        )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
