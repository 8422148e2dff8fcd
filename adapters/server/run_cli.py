"""`switchboard run`: logging set up from the config, then the App until SIGTERM or SIGINT,
or until the operator leaves the terminal chat (Ctrl-D, Ctrl-C twice, the end of its
input); SIGHUP reloads the file."""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import os
import signal
import sys
from pathlib import Path

from adapters.server import logs
from bridge.parts import StopFailed
from config import SwitchboardConfig
from config.errors import SwitchboardError
from config.schema import WorkspaceConfig
from config.secrets import Secrets, known_secrets

log = logging.getLogger(__name__)

ADMIN_OFF = "Admin console: off (set [admin] token in the config to turn it on)."


def run_command(args: argparse.Namespace, path: Path, config: SwitchboardConfig) -> int:
    """0: stopped cleanly; 1: stopped on an unexpected error, or a part failed to stop."""
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
    except SwitchboardError:
        raise
    except Exception as exc:
        # Through the log, where secrets are redacted, never as a bare traceback.
        log.critical("switchboard stopped on an unexpected error", exc_info=True)
        print(
            f"switchboard: stopped on an unexpected error ({type(exc).__name__});"
            f" the log ({log_file or 'stderr'}) has the details",
            file=sys.stderr,
        )
        return 1


MAIN_NICE = 5  # how much lower this process's priority is than the door process's


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
    if app.way_in.separate:
        # When both want the CPU, the doors get it first: acknowledgements stay fast, turns
        # fall behind. (This thread's, on Linux, and those it makes from now on; the door
        # processes are forked by a starter made from a thread made before, so one started
        # again after a crash keeps the priority the first had: adapters/doors/spawner.py.)
        # Here, not in the App: lowering is the process's choice, not that of a library object
        # (the tests run many Apps in one process).
        os.nice(MAIN_NICE)
    # Everything built so far (modules, clients, config) lives as long as the process. Frozen,
    # a full garbage collection no longer walks it: that walk paused the loop for about 130 ms
    # under load, enough to push Slack acks past their p99 budget (docs/benchmarks.md).
    gc.freeze()
    # A turn makes thousands of short-lived objects, and at the default threshold (700) the
    # youngest generation was collected several times a turn: 6-10% of the main process's
    # CPU. Ten times as many allocations between collections, and the older generations
    # collected that much less often in turn (CPU per turn 5.40 to 5.08 ms, docs/benchmarks.md).
    gc.set_threshold(7000, 20, 1000)
    print(banner(config, app.port), flush=True)
    if config.storage.shared:
        print(replica_line(config, app.replica, app.active), flush=True)
    failed: StopFailed | None = None
    try:
        await app.wait(stop)
    finally:
        try:
            await app.stop()
        except StopFailed as exc:  # each part's error is in the log already
            failed = exc
    print("Switchboard stopped; queued work resumes on the next start.", flush=True)
    if failed is not None:
        print(f"switchboard: {failed}", file=sys.stderr, flush=True)
        return 1
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
    else:
        lines.append(ADMIN_OFF)
    if (workspace := next((w for w in config.workspaces if w.console), None)) is not None:
        lines.append(
            "Type a message and press Enter (a paste of several lines is one message; Alt-Enter"
            f" starts a new line, Up recalls earlier ones). Try: {tries(workspace)}, /help."
            " Ctrl-C stops the agent's turn or clears the line; Ctrl-D, or Ctrl-C twice, quits."
        )
    return "\n".join(lines)


# What the banner suggests trying, each with the tool it needs (the offline model's words,
# `runtime/providers/offline.py`): only what the terminal's agent can do is suggested.
TRIES = (
    ("sleep", "work 5 (then type while it works)"),
    ("notify_operator", "notify hello"),
    ("spawn_agent", "spawn check the disk"),
    ("schedule_wakeup", "remind 10s stretch"),
)


def tries(workspace: WorkspaceConfig) -> str:
    """The suggestions for the agent the terminal's conversation talks to (its binding's,
    else the workspace's default), by the tools it has; "hello" when it has none of them."""
    from adapters.console.profile import CONVERSATION, NAME
    from bridge.bindings import agent_for
    from bridge.types import Route

    route = Route(platform=NAME, workspace_id=workspace.id, conversation_id=CONVERSATION)
    agent_id = agent_for(workspace, route, direct=True)
    agent = next((a for a in workspace.agents if a.id == agent_id), None)
    tools = set(agent.tools) if agent is not None else set()
    return ", ".join([said for tool, said in TRIES if tool in tools] or ["hello"])
