"""`switchboard init` on a terminal: one question at a time, each asked again until its
answer can be taken. A credential's shape is checked here first; then the platform is asked.
A credential the platform refuses is asked again, alone (every other answer is kept); one
whose platform cannot be reached may be kept unchecked, and the config says so."""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable

from adapters.server.credential_shapes import (
    ANTHROPIC_KEY,
    SLACK_APP_TOKEN,
    SLACK_BOT_TOKEN,
    SLACK_SIGNING_SECRET,
    SLACK_TEAM_ID,
    SLACK_USER_ID,
    TELEGRAM_TOKEN,
    TELEGRAM_USER_ID,
    Shape,
)
from adapters.server.init_checks import Checks, outcome
from adapters.server.init_config import Answers
from adapters.server.init_prompts import ask, optional, platforms, required, yes

SKIPPED = "the probe was skipped (--no-probe)"


class Interview:
    def __init__(self, args: argparse.Namespace, checks: Checks | None) -> None:
        """`checks` None: nothing is sent anywhere (`--no-probe`)."""
        self.args = args
        self.checks = checks
        self.answers = Answers()

    def run(self) -> Answers:
        a = self.answers
        how = "each token is checked with its platform as you give it"
        if self.checks is None:
            how = "no token is checked (--no-probe)"
        print(f"Switchboard setup: {how}. Ctrl-C stops and writes nothing.")
        asked = "Platforms: telegram, slack or both [telegram]: "
        a.platforms = self.args.platform or ask(asked, platforms)
        if "telegram" in a.platforms:
            a.telegram_token = self._credential(
                "Telegram bot token",
                TELEGRAM_TOKEN,
                "Telegram bot token (from @BotFather; hidden): ",
                lambda token: self._checks.telegram(token),
            )
        if "slack" in a.platforms:
            self._slack()
        if not self.args.offline:
            a.anthropic_key = self._credential(
                "Anthropic API key",
                ANTHROPIC_KEY,
                "Anthropic API key (hidden; empty: the offline model): ",
                lambda key: self._checks.model(key),
                can_be_empty=True,
            )
        if "telegram" in a.platforms:
            said = ask(
                "Your Telegram user id (empty: pair by DM instead): ", optional(TELEGRAM_USER_ID)
            )
            a.operator_telegram_id = int(said) if said else None
        if "slack" in a.platforms:
            a.operator_slack_id = ask(
                "Your Slack user id (U...; empty: pair by DM instead): ", optional(SLACK_USER_ID)
            )
        return a

    def _slack(self) -> None:
        a = self.answers
        a.slack_bot_token = self._credential(
            "Slack bot token",
            SLACK_BOT_TOKEN,
            "Slack bot token (xoxb-...; hidden): ",
            lambda token: self._checks.slack_bot(token, None),
        )
        if self.checks is not None and self.checks.slack_team_id is not None:
            a.slack_team_id = self.checks.slack_team_id  # from Slack, with the token
        else:
            a.slack_team_id = ask("Your Slack team id (T...): ", required(SLACK_TEAM_ID))
        a.slack_app_token = self._credential(
            "Slack app token",
            SLACK_APP_TOKEN,
            "Slack app token for Socket Mode (xapp-...; hidden; empty: events over HTTP): ",
            lambda token: self._checks.slack_app(token),
            can_be_empty=True,
        )
        if a.slack_app_token is None:  # Slack has no call that checks a signing secret
            asked = "Slack signing secret (hidden): "
            a.slack_signing_secret = ask(asked, required(SLACK_SIGNING_SECRET), hidden=True)

    @property
    def _checks(self) -> Checks:
        assert self.checks is not None, "no check runs with --no-probe"
        return self.checks

    def _credential(
        self,
        label: str,
        shape: Shape,
        prompt: str,
        check: Callable[[str], Awaitable[str]],
        *,
        can_be_empty: bool = False,
    ) -> str | None:
        """The credential, of its shape, checked unless the probe is skipped; asked again
        while its platform refuses it."""
        take = optional(shape) if can_be_empty else required(shape)
        while True:
            value = ask(prompt, take, hidden=True)
            if value is None:
                return None
            if self.checks is None:
                self.answers.unchecked[label] = SKIPPED
                return value
            result = outcome(check(value), value)
            if result.kind == "ok":
                print(f"  ok: {result.said}")
                return value
            if result.kind == "wrong":
                print(f"  wrong: {result.said}. Type it again; your other answers are kept.")
                continue
            print(f"  unreachable: {result.said}; the {label} was not checked.")
            if yes("  Keep it unchecked and go on? (n: type it again)", default=True):
                self.answers.unchecked[label] = result.said
                return value
