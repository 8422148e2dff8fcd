"""What `switchboard init` asks of Telegram (`adapters/platform_setup.py`): the bot token
(checked with `getMe`), and the operator's user id."""

from __future__ import annotations

import argparse
import re

from adapters.platform_setup import Asker, Given, SetupKind, Shape

TOKEN = Shape(
    "a Telegram bot token",
    # Telegram's own examples have 34 characters after the colon, @BotFather's tokens 35.
    re.compile(r"[0-9]+:[A-Za-z0-9_-]{30,}"),
    "is the bot's id, a colon and about 35 letters, digits, _ or - "
    "(@BotFather gives it: 123456789:AAH...)",
)
USER_ID = Shape(
    "a Telegram user id",
    re.compile(r"[0-9]+"),
    "is a number (@userinfobot tells you yours)",
)
LABEL = "Telegram bot token"
SECRET = "SWITCHBOARD_TELEGRAM_TOKEN"


def _flags(init: argparse.ArgumentParser) -> None:
    init.add_argument("--telegram-token")
    init.add_argument("--operator-telegram-id", type=int)


class TelegramSetup:
    def __init__(self, args: argparse.Namespace) -> None:
        self._url: str | None = args.telegram_api_base_url
        self.token: str | None = args.telegram_token
        self.user_id: int | None = args.operator_telegram_id

    async def _whose(self, token: str) -> str:
        from adapters.telegram.probe import TELEGRAM_API, whose_bot  # its SDK: when asked

        return await whose_bot(token, self._url or TELEGRAM_API)

    def missing(self) -> list[str]:
        return [] if self.token else ["--telegram-token"]

    def credentials(self) -> list[Given]:
        return [Given(LABEL, "--telegram-token", self.token, TOKEN, self._whose)]

    def checked(self) -> None:
        pass

    def ask(self, asker: Asker) -> None:
        prompt = "Telegram bot token (from @BotFather; hidden): "
        self.token = asker.credential(LABEL, TOKEN, prompt, self._whose)

    def ask_operator(self, asker: Asker) -> None:
        said = asker.optional("Your Telegram user id (empty: pair by DM instead): ", USER_ID)
        self.user_id = int(said) if said else None

    def operator(self) -> Given | None:
        if self.user_id is None:
            return None
        return Given("Telegram user id", "--operator-telegram-id", str(self.user_id), USER_ID)

    def secrets(self) -> dict[str, str | None]:
        return {SECRET: self.token}

    def section(self) -> list[str]:
        if not self.token:
            return []
        lines = ["", "  [workspaces.telegram]", f'  bot_token = "${{{SECRET}}}"']
        if self._url:
            lines.append(f'  api_base_url = "{self._url}"')
        return lines

    def operator_line(self) -> str | None:
        return None if self.user_id is None else f"  telegram_user_id = {self.user_id}"


TELEGRAM_SETUP = SetupKind(_flags, "--operator-telegram-id", TelegramSetup, (TOKEN,))
