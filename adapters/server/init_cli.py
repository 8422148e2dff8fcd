"""`switchboard init`: a config for your own bot. Each answer's shape is checked on this
machine, then each credential against its platform (unless `--no-probe`); a platform that
cannot be reached is told apart from one that refuses. It writes the TOML with `${NAME}`
references and the secrets in the env file beside it (init_config.py), never overwrites a
config without `--force`, and ends with the one command that starts the bot (and the one
that checks what was not checked). Every question has a flag; `--non-interactive` takes
only flags and names each one missing or of the wrong shape."""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path
from typing import Any

from adapters.server.credential_shapes import (
    ANTHROPIC_KEY,
    SLACK_APP_TOKEN,
    SLACK_BOT_TOKEN,
    SLACK_SIGNING_SECRET,
    SLACK_TEAM_ID,
    SLACK_USER_ID,
    TELEGRAM_TOKEN,
    Shape,
    problem,
)
from adapters.server.init_checks import Checks, outcome
from adapters.server.init_config import Answers, write
from adapters.server.init_interview import SKIPPED, Interview
from config.loading import env_file_of

DEFAULT_CONFIG = Path("config/bot.toml")


class InitError(Exception):
    """Setup cannot go on; the message says why and what to do."""


def add_parser(sub: Any, config: argparse.ArgumentParser) -> None:
    """`config`, the shared `--config`, is not a parent here: init's default path is its own."""
    text = (
        f"set up a config for your bot (default {DEFAULT_CONFIG}, its secrets in "
        f"{env_file_of(DEFAULT_CONFIG)}), checking each token with its platform as you give it"
    )
    init = sub.add_parser("init", help=text, description=text)
    init.add_argument(
        "--config",
        metavar="PATH",
        default=argparse.SUPPRESS,
        help=f"where to write the config (default {DEFAULT_CONFIG}; the .env file goes beside)",
    )
    init.add_argument("--force", action="store_true", help="overwrite an existing config")
    init.add_argument("--non-interactive", action="store_true", help="take only these flags")
    init.add_argument(
        "--no-probe",
        action="store_true",
        help=(
            "write the config without checking the tokens with their platforms (no network "
            "needed); check them later with `switchboard check-config --config PATH --probe`"
        ),
    )
    init.add_argument("--platform", action="append", choices=["telegram", "slack"])
    init.add_argument("--telegram-token")
    init.add_argument("--slack-bot-token")
    init.add_argument("--slack-team-id", help="T...; asked of Slack with the bot token if omitted")
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
    me = _program()
    check = f"{me} check-config --config {path} --probe"
    checks = None if args.no_probe else Checks(args)
    try:
        if args.non_interactive:
            answers = _from_flags(args)
            _check_all(checks, answers, check)
        else:
            answers = Interview(args, checks).run()
    except InitError as exc:
        print(f"switchboard: {exc}", file=sys.stderr)
        return 2
    except (KeyboardInterrupt, EOFError):
        print("\nswitchboard: setup stopped; nothing was written", file=sys.stderr)
        return 130
    write(path, env, answers, args, check)
    print(f"Wrote {path} and {env} (your secrets, readable by you only).")
    if answers.unchecked:
        print("The probe was skipped for: " + ", ".join(answers.unchecked) + ".")
        print(f"Check them once this machine reaches their platforms:  {check}")
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


# -- the flags alone (--non-interactive) ------------------------------------------------


def _from_flags(args: argparse.Namespace) -> Answers:
    platforms = args.platform or []
    missing = _missing_flags(args, platforms)
    answers = Answers(
        platforms=platforms,
        telegram_token=args.telegram_token if "telegram" in platforms else None,
        slack_bot_token=args.slack_bot_token if "slack" in platforms else None,
        slack_team_id=args.slack_team_id,
        slack_app_token=args.slack_app_token,
        slack_signing_secret=args.slack_signing_secret,
        anthropic_key=None if args.offline else args.anthropic_key,
        operator_telegram_id=args.operator_telegram_id,
        operator_slack_id=args.operator_slack_id,
    )
    wrong = _wrong_shapes(answers)
    if missing or wrong:
        needs = ["--non-interactive needs: " + "; ".join(missing)] if missing else []
        raise InitError("\n  ".join(["nothing was sent or written:", *needs, *wrong]))
    return answers


def _missing_flags(args: argparse.Namespace, platforms: list[str]) -> list[str]:
    """Every flag --non-interactive needs and was not given, in the order of the flags."""
    missing = [] if platforms else ["--platform telegram|slack"]
    if "telegram" in platforms and not args.telegram_token:
        missing.append("--telegram-token")
    if "slack" in platforms:
        missing += _missing_slack_flags(args)
    if not (args.anthropic_key or args.offline):
        missing.append("--anthropic-key or --offline")
    if not (args.operator_telegram_id or args.operator_slack_id or args.pairing):
        missing.append("--operator-telegram-id, --operator-slack-id or --pairing")
    return missing


def _missing_slack_flags(args: argparse.Namespace) -> list[str]:
    missing = [] if args.slack_bot_token else ["--slack-bot-token"]
    if args.no_probe and not args.slack_team_id:
        missing.append("--slack-team-id (with --no-probe, Slack is not asked for it)")
    if not (args.slack_app_token or args.slack_signing_secret):
        missing.append("--slack-app-token or --slack-signing-secret")
    return missing


def _wrong_shapes(a: Answers) -> list[str]:
    """Every answer of the wrong shape: nothing is sent before they are all right."""
    given: list[tuple[str, str | None, Shape]] = [
        ("--telegram-token", a.telegram_token, TELEGRAM_TOKEN),
        ("--slack-bot-token", a.slack_bot_token, SLACK_BOT_TOKEN),
        ("--slack-team-id", a.slack_team_id, SLACK_TEAM_ID),
        ("--slack-app-token", a.slack_app_token, SLACK_APP_TOKEN),
        ("--slack-signing-secret", a.slack_signing_secret, SLACK_SIGNING_SECRET),
        ("--anthropic-key", a.anthropic_key, ANTHROPIC_KEY),
        ("--operator-slack-id", a.operator_slack_id, SLACK_USER_ID),
    ]
    return [
        f"{flag}: {said}"
        for flag, value, shape in given
        if value is not None and (said := problem(value, shape)) is not None
    ]


def _check_all(checks: Checks | None, a: Answers, check: str) -> None:
    """Each credential against its platform (none with --no-probe); the first refused or
    unreachable one stops it, and nothing is written."""
    given = {
        "Telegram bot token": a.telegram_token,
        "Slack bot token": a.slack_bot_token,
        "Slack app token": a.slack_app_token,
        "Anthropic API key": a.anthropic_key,
    }
    if checks is None:
        a.unchecked = {label: SKIPPED for label, value in given.items() if value}
        return
    runs = {
        "Telegram bot token": checks.telegram,
        "Slack bot token": lambda token: checks.slack_bot(token, a.slack_team_id),
        "Slack app token": checks.slack_app,
        "Anthropic API key": checks.model,
    }
    for label, value in given.items():
        if not value:
            continue
        result = outcome(runs[label](value), value)
        if result.kind == "wrong":
            raise InitError(f"{label}: {result.said}; nothing was written")
        if result.kind == "unreachable":
            raise InitError(
                f"{label}: {result.said}; it was not checked, and nothing was written. Pass "
                f"--no-probe to write the config unchecked, then run `{check}` once this "
                "machine reaches the platform"
            )
        print(f"  ok: {result.said}")
    if a.slack_bot_token and a.slack_team_id is None:
        a.slack_team_id = checks.slack_team_id
