"""The `switchboard` command: its arguments, and which module runs each subcommand (run,
check-config, status, usage, reload, pairing, init)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path

from adapters.server.init_cli import add_parser as add_init_parser
from adapters.server.pairing_cli import add_parser as add_pairing_parser
from adapters.server.usage_cli import add_parser as add_usage_parser
from adapters.server.usage_cli import usage_command
from config import DEFAULT_PATH, ENV_PATH, SwitchboardConfig, load, resolve_path
from config.errors import SwitchboardError
from config.loading import load_for_reading


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
        if args.command == "status":  # it reads the store: a token left unset does not stop it
            from adapters.server.status_cli import status_command

            return status_command(*load_for_reading(path))
        if args.command == "usage":  # so does this one
            return usage_command(args, path, *load_for_reading(path))
        config = load(path)
        return _command(args.command)(args, path, config)
    except SwitchboardError as exc:  # a config error, a database another process holds, ...
        print(f"switchboard: {exc}", file=sys.stderr)
        return 2


Command = Callable[[argparse.Namespace, Path, SwitchboardConfig], int]
RUN_KEYS = (
    "SIGTERM stops it (queued and running work resumes on the next start). In the terminal "
    "chat ([console] in the config): Ctrl-C stops the agent's turn, or clears a half-typed "
    "line, or, pressed twice on an empty line, quits; Ctrl-D quits at once (a turn under way "
    "resumes on the next start). Without a terminal chat, Ctrl-C stops it as SIGTERM does."
)


def _command(name: str) -> Command:
    """The subcommand's function, imported only when it runs (`status` imports no SDK)."""
    if name == "check-config":
        from adapters.server.check_cli import check_config_command

        return check_config_command
    if name == "reload":
        from adapters.server.reload_cli import reload_command

        return lambda args, path, config: reload_command(path, config)
    if name == "pairing":
        from adapters.server.pairing_cli import pairing_command

        return lambda args, path, config: pairing_command(args, config)
    from adapters.server.run_cli import run_command

    return run_command


def _parser() -> argparse.ArgumentParser:
    """`--config` is taken before or after the subcommand: `switchboard --config F run` and
    `switchboard run --config F` mean the same (the latter wins if both are given)."""
    config = argparse.ArgumentParser(add_help=False)
    config.add_argument(
        "--config",
        metavar="PATH",
        default=argparse.SUPPRESS,
        help=(
            f"the config file (else ${ENV_PATH}, else {DEFAULT_PATH}: the offline demo; "
            f"`switchboard init` writes config/bot.toml)"
        ),
    )
    parser = argparse.ArgumentParser(
        prog="switchboard",
        description=(
            "Run AI agents from Slack and Telegram. `switchboard run` alone chats with the "
            f"offline demo ({DEFAULT_PATH}) in this terminal; `switchboard init` writes your "
            "bot's config to config/bot.toml, run with `switchboard run --config "
            "config/bot.toml`."
        ),
        parents=[config],
    )
    parser.add_argument(
        "--version", action="version", version=f"switchboard {version('switchboard')}"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, text in (
        ("run", "serve every configured workspace in one process, until stopped"),
        ("check-config", "validate the config file and summarize it; exit 2 if it is wrong"),
        ("status", "whether Switchboard runs, what each session does now, what failed"),
        ("reload", "check the config file, then have the running process apply it (SIGHUP)"),
    ):
        described = f"{text}. {RUN_KEYS}" if name == "run" else text
        command = sub.add_parser(name, parents=[config], help=text, description=described)
        if name == "status":
            add_usage_parser(sub, config)
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


if __name__ == "__main__":
    sys.exit(main())
