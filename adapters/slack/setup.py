"""What `switchboard init` asks of Slack (`adapters/platform_setup.py`): the bot token
(checked with `auth.test`, which also gives the team id), an app token for Socket Mode
(checked) or else a signing secret for events over HTTP, and the operator's user id."""

from __future__ import annotations

import argparse
import re

from adapters.platform_setup import Asker, Given, SetupKind, Shape
from config.errors import CredentialRefused

BOT_TOKEN = Shape(
    "a Slack bot token",
    re.compile(r"(xoxe\.)?xoxb-[A-Za-z0-9-]+"),  # xoxe.xoxb-: with token rotation on
    "starts with xoxb- (your app's page, OAuth & Permissions: Bot User OAuth Token)",
)
APP_TOKEN = Shape(
    "a Slack app-level token",
    re.compile(r"xapp-[A-Za-z0-9-]+"),
    "starts with xapp- (your app's page, Basic Information: App-Level Tokens, with the "
    "connections:write scope)",
)
SIGNING_SECRET = Shape(
    "a Slack signing secret",
    re.compile(r"[0-9a-fA-F]{16,}"),
    "is hex digits, 0-9 and a-f (your app's page, Basic Information: Signing Secret)",
)
TEAM_ID = Shape(
    "a Slack team id",
    re.compile(r"[TE][A-Z0-9]+"),
    "starts with T (in a browser, your workspace's address: app.slack.com/client/T...)",
)
USER_ID = Shape(
    "a Slack user id",
    re.compile(r"[UW][A-Z0-9]+"),
    "starts with U or W (your Slack profile, the ... menu: Copy member ID)",
)
RECOGNIZED = (
    BOT_TOKEN,
    APP_TOKEN,
    Shape("a Slack user token", re.compile(r"(xoxe\.)?xoxp-.+"), ""),
    Shape("a Slack token of another kind", re.compile(r"xox[a-z](\.|-).+"), ""),
)
BOT, APP = "Slack bot token", "Slack app token"
SECRETS = (
    "SWITCHBOARD_SLACK_BOT_TOKEN",
    "SWITCHBOARD_SLACK_APP_TOKEN",
    "SWITCHBOARD_SLACK_SIGNING_SECRET",
)


def _flags(init: argparse.ArgumentParser) -> None:
    init.add_argument("--slack-bot-token")
    init.add_argument("--slack-team-id", help="T...; asked of Slack with the bot token if omitted")
    init.add_argument("--slack-app-token", help="Socket Mode (no public URL needed)")
    init.add_argument("--slack-signing-secret", help="events over HTTP instead")
    init.add_argument("--operator-slack-id")


class SlackSetup:
    def __init__(self, args: argparse.Namespace) -> None:
        self._url: str | None = args.slack_api_base_url
        self._no_probe: bool = args.no_probe
        self.bot_token: str | None = args.slack_bot_token
        self.team_id: str | None = args.slack_team_id
        self.app_token: str | None = args.slack_app_token
        self.signing_secret: str | None = args.slack_signing_secret
        self.user_id: str | None = args.operator_slack_id
        self._found_team: str | None = None  # the bot token's team, once checked

    async def _bot(self, token: str) -> str:
        """Whose the token is; refused when it is another team's than the one given."""
        from adapters.slack.probe import SLACK_API, team_of

        found, team = await team_of(token, self._url or SLACK_API)
        if self.team_id is not None and team != self.team_id:
            raise CredentialRefused(f"the token belongs to Slack team {team}, not {self.team_id}")
        self._found_team = team
        return found

    async def _app(self, token: str) -> str:
        from adapters.slack.probe import SLACK_API, check_app_token

        return await check_app_token(token, self._url or SLACK_API)

    def missing(self) -> list[str]:
        missing = [] if self.bot_token else ["--slack-bot-token"]
        if self._no_probe and not self.team_id:
            missing.append("--slack-team-id (with --no-probe, Slack is not asked for it)")
        if not (self.app_token or self.signing_secret):
            missing.append("--slack-app-token or --slack-signing-secret")
        return missing

    def credentials(self) -> list[Given]:
        return [
            Given(BOT, "--slack-bot-token", self.bot_token, BOT_TOKEN, self._bot),
            Given("Slack team id", "--slack-team-id", self.team_id, TEAM_ID),
            Given(APP, "--slack-app-token", self.app_token, APP_TOKEN, self._app),
            Given(
                "Slack signing secret",
                "--slack-signing-secret",
                self.signing_secret,
                SIGNING_SECRET,
            ),
        ]

    def checked(self) -> None:
        if self.bot_token and self.team_id is None:
            self.team_id = self._found_team

    def ask(self, asker: Asker) -> None:
        self.bot_token = asker.credential(
            BOT, BOT_TOKEN, "Slack bot token (xoxb-...; hidden): ", self._bot
        )
        if asker.probing and self._found_team is not None:
            self.team_id = self._found_team  # from Slack, with the token
        else:
            self.team_id = asker.text("Your Slack team id (T...): ", TEAM_ID)
        self.app_token = asker.credential(
            APP,
            APP_TOKEN,
            "Slack app token for Socket Mode (xapp-...; hidden; empty: events over HTTP): ",
            self._app,
            can_be_empty=True,
        )
        if self.app_token is None:  # Slack has no call that checks a signing secret
            asked = "Slack signing secret (hidden): "
            self.signing_secret = asker.text(asked, SIGNING_SECRET, hidden=True)

    def ask_operator(self, asker: Asker) -> None:
        asked = "Your Slack user id (U...; empty: pair by DM instead): "
        self.user_id = asker.optional(asked, USER_ID)

    def operator(self) -> Given | None:
        if self.user_id is None:
            return None
        return Given("Slack user id", "--operator-slack-id", self.user_id, USER_ID)

    def secrets(self) -> dict[str, str | None]:
        values = (self.bot_token, self.app_token, self.signing_secret)
        return dict(zip(SECRETS, values, strict=True))

    def section(self) -> list[str]:
        if not self.bot_token:
            return []
        bot, app, signing = SECRETS
        lines = ["", "  [workspaces.slack]", f'  team_id = "{self.team_id}"']
        lines.append(f'  bot_token = "${{{bot}}}"')
        if self.app_token:
            lines.append(f'  app_token = "${{{app}}}"')
        if self.signing_secret:
            lines.append(f'  signing_secret = "${{{signing}}}"')
        if self._url:
            lines.append(f'  api_base_url = "{self._url}"')
        return lines

    def operator_line(self) -> str | None:
        return f'  slack_user_id = "{self.user_id}"' if self.user_id else None


SLACK_SETUP = SetupKind(_flags, "--operator-slack-id", SlackSetup, RECOGNIZED)
