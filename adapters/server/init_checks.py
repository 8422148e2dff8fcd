"""The checks `switchboard init` makes of a credential against its platform, each told
apart as passed (what it belongs to), wrong (the platform refused it: its own reason) or
unreachable (the platform could not be asked: which host, and that nothing was checked).
The platforms' SDKs are imported only when a check runs."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Literal

from config.errors import CredentialRefused, PlatformUnreachable

MODEL = "claude-sonnet-4-5"


@dataclass(frozen=True)
class Outcome:
    kind: Literal["ok", "wrong", "unreachable"]
    said: str  # what it belongs to, why it was refused, or which host was not reached


def outcome(check: Awaitable[str], secret: str) -> Outcome:
    """The check run to its end. An error may quote what it was sent: the secret is cut out."""

    async def wait() -> str:
        return await check

    try:
        return Outcome("ok", asyncio.run(wait()))
    except CredentialRefused as exc:
        return Outcome("wrong", str(exc).replace(secret, "[the secret]"))
    except PlatformUnreachable as exc:
        return Outcome("unreachable", str(exc).replace(secret, "[the secret]"))


class Checks:
    """Each credential's check, against the platforms' own hosts or the base URLs given
    (a self-hosted Bot API server, a proxy, the suite's fakes)."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.telegram_url: str | None = args.telegram_api_base_url
        self.slack_url: str | None = args.slack_api_base_url
        self.anthropic_url: str | None = args.anthropic_api_base_url
        self.slack_team_id: str | None = None  # the bot token's team, once checked

    def telegram(self, token: str) -> Awaitable[str]:
        from adapters.telegram.probe import TELEGRAM_API, whose_bot

        return whose_bot(token, self.telegram_url or TELEGRAM_API)

    async def slack_bot(self, token: str, team_id: str | None) -> str:
        """Whose the token is; refused when it is another team's than `team_id` (given)."""
        from adapters.slack.probe import SLACK_API, team_of

        found, team = await team_of(token, self.slack_url or SLACK_API)
        if team_id is not None and team != team_id:
            raise CredentialRefused(f"the token belongs to Slack team {team}, not {team_id}")
        self.slack_team_id = team
        return found

    def slack_app(self, token: str) -> Awaitable[str]:
        from adapters.slack.probe import SLACK_API, check_app_token

        return check_app_token(token, self.slack_url or SLACK_API)

    def model(self, key: str) -> Awaitable[str]:
        from runtime.providers.anthropic import check_model

        return check_model(MODEL, key, self.anthropic_url)
