"""`switchboard init`: a config for your own bot, each credential checked against its
platform as you give it. It writes the TOML with `${NAME}` references and the secrets in the
env file beside it (mode 0600, read with the config), never overwrites a config without
`--force`, and ends with the one command that starts the bot. Every question has a flag;
`--non-interactive` takes only flags and names each one missing."""

from __future__ import annotations

import argparse
import asyncio
import getpass
import os
import shutil
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from config.errors import CredentialRefused
from config.loading import env_file_of

DEFAULT_CONFIG = Path("config/bot.toml")
MODEL = "claude-sonnet-4-5"
TRIES = 3  # a wrong token may be typed again this often


class InitError(Exception):
    """Setup cannot go on; the message says why and what to do."""


@dataclass
class Answers:
    platforms: list[str] = field(default_factory=list)
    telegram_token: str | None = None
    slack_bot_token: str | None = None
    slack_team_id: str | None = None
    slack_app_token: str | None = None
    slack_signing_secret: str | None = None
    anthropic_key: str | None = None
    operator_telegram_id: int | None = None
    operator_slack_id: str | None = None


def add_parser(sub: Any, config: argparse.ArgumentParser) -> None:
    text = "set up a config for your bot, checking each token as you give it"
    init = sub.add_parser("init", parents=[config], help=text, description=text)
    init.add_argument("--force", action="store_true", help="overwrite an existing config")
    init.add_argument("--non-interactive", action="store_true", help="take only these flags")
    init.add_argument("--platform", action="append", choices=["telegram", "slack"])
    init.add_argument("--telegram-token")
    init.add_argument("--slack-bot-token")
    init.add_argument("--slack-app-token", help="Socket Mode (no public URL needed)")
    init.add_argument("--slack-signing-secret", help="events over HTTP instead")
    init.add_argument("--anthropic-key", help="else the offline model")
    init.add_argument("--offline", action="store_true", help="the offline model, no key")
    init.add_argument("--operator-telegram-id", type=int)
    init.add_argument("--operator-slack-id")
    init.add_argument("--pairing", action="store_true", help="become an operator by DM pairing")
    for name in ("telegram", "slack", "anthropic"):  # a self-hosted Bot API server, a proxy
        init.add_argument(f"--{name}-api-base-url", help=argparse.SUPPRESS)


def init_command(args: argparse.Namespace, path: Path) -> int:
    path = path if getattr(args, "config", None) else DEFAULT_CONFIG
    env = env_file_of(path)
    if path.exists() and not args.force:
        print(f"switchboard: {path} exists; pass --force to replace it", file=sys.stderr)
        return 2
    try:
        answers = _from_flags(args) if args.non_interactive else _interview(args)
        if args.non_interactive:
            _check_all(args, answers)
    except InitError as exc:
        print(f"switchboard: {exc}", file=sys.stderr)
        return 2
    except (KeyboardInterrupt, EOFError):
        print("\nswitchboard: setup stopped; nothing was written", file=sys.stderr)
        return 130
    _write(path, env, answers, args)
    print(f"Wrote {path} and {env} (your secrets, readable by you only).")
    me = _program()
    print(f"Start your bot:  {me} run --config {path}")
    if answers.operator_telegram_id is None and answers.operator_slack_id is None:
        print(
            "Then write to your bot: it answers with a pairing code. Approve yourself with\n"
            f"  {me} pairing approve CODE --config {path}"
        )
    return 0


def _program() -> str:
    """How to run this program again from here: `switchboard` when that is what the shell
    finds, else the path it was started by (`.venv/bin/switchboard`)."""
    started = Path(sys.argv[0])
    found = shutil.which("switchboard")
    if found and Path(found).resolve() == started.resolve():
        return "switchboard"
    try:
        return str(started.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(started)


# -- asking --------------------------------------------------------------------------


def _interview(args: argparse.Namespace) -> Answers:
    print("Switchboard setup: each token is checked as you give it. Ctrl-C stops, writes nothing.")
    asked = "Platforms: telegram, slack or both [telegram]: "
    a = Answers(platforms=args.platform or _platforms(input(asked)))
    if "telegram" in a.platforms:
        a.telegram_token = _checked(
            "Telegram bot token (from @BotFather; hidden): ",
            lambda token: _telegram(args, token),
        )
    if "slack" in a.platforms:
        a.slack_bot_token = _checked(
            "Slack bot token (xoxb-...; hidden): ", lambda token: _slack_bot(args, a, token)
        )
        app = getpass.getpass("Slack app token for Socket Mode (xapp-...; hidden; empty: HTTP): ")
        if app.strip():
            _report(_slack_app(args, app.strip()))
            a.slack_app_token = app.strip()
        else:
            a.slack_signing_secret = getpass.getpass("Slack signing secret (hidden): ").strip()
    key = getpass.getpass("Anthropic API key (hidden; empty: the offline model): ").strip()
    if key:
        _report(_model(args, key))
        a.anthropic_key = key
    if "telegram" in a.platforms:
        said = input("Your Telegram user id (empty: pair by DM instead): ").strip()
        a.operator_telegram_id = int(said) if said.isdigit() else None
    if "slack" in a.platforms:
        said = input("Your Slack user id (U...; empty: pair by DM instead): ").strip()
        a.operator_slack_id = said or None
    return a


def _platforms(said: str) -> list[str]:
    said = said.strip().lower() or "telegram"
    chosen = ["telegram", "slack"] if said == "both" else [p.strip() for p in said.split(",")]
    wrong = [p for p in chosen if p not in ("telegram", "slack")]
    if wrong:
        raise InitError(f"unknown platform {wrong[0]!r}: answer telegram, slack or both")
    return chosen


def _checked(prompt: str, check: Callable[[str], Awaitable[str]]) -> str:
    for attempt in range(1, TRIES + 1):
        token = getpass.getpass(prompt).strip()
        try:
            print(f"  ok: {_run(check(token))}")
            return token
        except CredentialRefused as exc:
            print(f"  wrong: {exc}" + ("; try again" if attempt < TRIES else ""))
    raise InitError("no working token given; nothing was written")


def _report(check: Awaitable[str]) -> None:
    try:
        print(f"  ok: {_run(check)}")
    except CredentialRefused as exc:
        raise InitError(f"{exc}; nothing was written") from None


# -- checking ------------------------------------------------------------------------


def _telegram(args: argparse.Namespace, token: str) -> Awaitable[str]:
    from adapters.telegram.probe import whose_bot

    return whose_bot(token, args.telegram_api_base_url or "https://api.telegram.org/bot")


async def _slack_bot(args: argparse.Namespace, answers: Answers, token: str) -> str:
    from adapters.slack.probe import SLACK_API, team_of

    found, team_id = await team_of(token, args.slack_api_base_url or SLACK_API)
    answers.slack_team_id = team_id
    return found


def _slack_app(args: argparse.Namespace, token: str) -> Awaitable[str]:
    from adapters.slack.probe import SLACK_API, check_app_token

    return check_app_token(token, args.slack_api_base_url or SLACK_API)


def _model(args: argparse.Namespace, key: str) -> Awaitable[str]:
    from runtime.providers.anthropic import check_model

    return check_model(MODEL, key, args.anthropic_api_base_url)


def _from_flags(args: argparse.Namespace) -> Answers:
    platforms = args.platform or []
    missing = [] if platforms else ["--platform telegram|slack"]
    if "telegram" in platforms and not args.telegram_token:
        missing.append("--telegram-token")
    if "slack" in platforms:
        missing += [] if args.slack_bot_token else ["--slack-bot-token"]
        if not (args.slack_app_token or args.slack_signing_secret):
            missing.append("--slack-app-token or --slack-signing-secret")
    if not (args.anthropic_key or args.offline):
        missing.append("--anthropic-key or --offline")
    if not (args.operator_telegram_id or args.operator_slack_id or args.pairing):
        missing.append("--operator-telegram-id, --operator-slack-id or --pairing")
    if missing:
        raise InitError("--non-interactive needs: " + "; ".join(missing))
    return Answers(
        platforms=platforms,
        telegram_token=args.telegram_token,
        slack_bot_token=args.slack_bot_token,
        slack_app_token=args.slack_app_token,
        slack_signing_secret=args.slack_signing_secret,
        anthropic_key=args.anthropic_key,
        operator_telegram_id=args.operator_telegram_id,
        operator_slack_id=args.operator_slack_id,
    )


def _check_all(args: argparse.Namespace, a: Answers) -> None:
    if a.telegram_token:
        _report(_telegram(args, a.telegram_token))
    if a.slack_bot_token:
        _report(_slack_bot(args, a, a.slack_bot_token))
    if a.slack_app_token:
        _report(_slack_app(args, a.slack_app_token))
    if a.anthropic_key:
        _report(_model(args, a.anthropic_key))


def _run(check: Awaitable[str]) -> str:
    async def wait() -> str:
        return await check

    return asyncio.run(wait())


# -- writing -------------------------------------------------------------------------


def _write(path: Path, env: Path, a: Answers, args: argparse.Namespace) -> None:
    secrets = {
        "SWITCHBOARD_TELEGRAM_TOKEN": a.telegram_token,
        "SWITCHBOARD_SLACK_BOT_TOKEN": a.slack_bot_token,
        "SWITCHBOARD_SLACK_APP_TOKEN": a.slack_app_token,
        "SWITCHBOARD_SLACK_SIGNING_SECRET": a.slack_signing_secret,
        "ANTHROPIC_API_KEY": a.anthropic_key,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(env, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)  # an existing file keeps its mode on open: set it
    with os.fdopen(fd, "w") as out:
        out.write("# Secrets for the config beside this file; read by switchboard with it.\n")
        out.writelines(f"{k}={v}\n" for k, v in secrets.items() if v)
    path.write_text(_toml(a, args, path), encoding="utf-8")


def _toml(a: Answers, args: argparse.Namespace, path: Path) -> str:
    pairing = a.operator_telegram_id is None and a.operator_slack_id is None
    lines = [
        f"# Written by `switchboard init`. Secrets are ${{NAME}}s, set in {path.stem}.env",
        "# beside this file (or in the environment, which wins).",
        "",
        "[storage]",
        f'path = "var/{path.stem}.db"',
        "",
        "[provider]",
    ]
    if a.anthropic_key:
        lines += ['kind = "anthropic"', f'model = "{MODEL}"', 'api_key = "${ANTHROPIC_API_KEY}"']
        if args.anthropic_api_base_url:
            lines.append(f'base_url = "{args.anthropic_api_base_url}"')
    else:
        lines.append('kind = "offline"')
    lines += ["", "[[workspaces]]", 'id = "main"', 'default_agent = "assistant"']
    if a.telegram_token:
        lines += ["", "  [workspaces.telegram]", '  bot_token = "${SWITCHBOARD_TELEGRAM_TOKEN}"']
        if args.telegram_api_base_url:
            lines.append(f'  api_base_url = "{args.telegram_api_base_url}"')
    if a.slack_bot_token:
        lines += [
            "",
            "  [workspaces.slack]",
            f'  team_id = "{a.slack_team_id}"',
            '  bot_token = "${SWITCHBOARD_SLACK_BOT_TOKEN}"',
        ]
        if a.slack_app_token:
            lines.append('  app_token = "${SWITCHBOARD_SLACK_APP_TOKEN}"')
        if a.slack_signing_secret:
            lines.append('  signing_secret = "${SWITCHBOARD_SLACK_SIGNING_SECRET}"')
        if args.slack_api_base_url:
            lines.append(f'  api_base_url = "{args.slack_api_base_url}"')
    lines += ["", "  [workspaces.pairing]", f"  enabled = {'true' if pairing else 'false'}"]
    lines += ["", "  [[workspaces.operators]]", '  id = "owner"', "  primary = true"]
    if a.operator_telegram_id is not None:
        lines.append(f"  telegram_user_id = {a.operator_telegram_id}")
    if a.operator_slack_id:
        lines.append(f'  slack_user_id = "{a.operator_slack_id}"')
    lines += [
        "",
        "  [[workspaces.agents]]",
        '  id = "assistant"',
        '  system_prompt = "You are a helpful assistant."',
        "",
    ]
    return "\n".join(lines)
