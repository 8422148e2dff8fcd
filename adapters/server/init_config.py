"""What `switchboard init` writes: the TOML with `${NAME}` references, and the secrets in
the env file beside it (mode 0600, read with the config). A credential that was not checked
(the probe skipped, or its platform unreachable) is named at the top of the TOML with the
command that checks it."""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, field
from pathlib import Path

from adapters.server.init_checks import MODEL


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
    # What was not checked against its platform, and why ("the probe was skipped", ...).
    unchecked: dict[str, str] = field(default_factory=dict)


def write(path: Path, env: Path, a: Answers, args: argparse.Namespace, check: str) -> None:
    """`check`: the command that checks the credentials later."""
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
    path.write_text(_toml(a, args, path, check), encoding="utf-8")


def _toml(a: Answers, args: argparse.Namespace, path: Path, check: str) -> str:
    pairing = a.operator_telegram_id is None and a.operator_slack_id is None
    lines = [
        f"# Written by `switchboard init`. Secrets are ${{NAME}}s, set in {path.stem}.env",
        "# beside this file (or in the environment, which wins).",
    ]
    if a.unchecked:
        lines.append(
            "# Probe skipped: these were not checked against their platforms when written."
        )
        lines += [f"#   {what}: {' '.join(why.split())}" for what, why in a.unchecked.items()]
        lines.append(f"# Check them with: {check}")
    lines += ["", "[storage]", f'path = "var/{path.stem}.db"', "", "[provider]"]
    lines += _provider(a, args)
    lines += ["", "[[workspaces]]", 'id = "main"', 'default_agent = "assistant"']
    lines += _platforms(a, args)
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


def _provider(a: Answers, args: argparse.Namespace) -> list[str]:
    if not a.anthropic_key:
        return ['kind = "offline"']
    lines = ['kind = "anthropic"', f'model = "{MODEL}"', 'api_key = "${ANTHROPIC_API_KEY}"']
    if args.anthropic_api_base_url:
        lines.append(f'base_url = "{args.anthropic_api_base_url}"')
    return lines


def _platforms(a: Answers, args: argparse.Namespace) -> list[str]:
    lines: list[str] = []
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
    return lines
