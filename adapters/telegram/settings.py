"""Telegram's section of a workspace in the admin's file, `[workspaces.telegram]`, and how its
operators are named there (`telegram_user_id`, a number): what the config learns of Telegram
(`config/platform_sections.py`)."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import SecretStr, field_validator, model_validator

from config.platform_sections import PlatformSection
from config.platforms import present
from config.strict import Strict

# Telegram's rule for setWebhook's secret_token.
_WEBHOOK_SECRET = re.compile(r"[A-Za-z0-9_-]{1,256}")


class TelegramConfig(Strict):
    bot_token: SecretStr
    mode: Literal["polling", "webhook"] = "polling"
    webhook_secret: SecretStr | None = None
    api_base_url: str = "https://api.telegram.org/bot"
    chats: list[int] = []

    _present = field_validator("bot_token")(present)

    @field_validator("webhook_secret")
    @classmethod
    def _as_telegram_takes_it(cls, secret: SecretStr | None) -> SecretStr | None:
        if secret is not None and not _WEBHOOK_SECRET.fullmatch(secret.get_secret_value()):
            raise ValueError(
                "must be 1 to 256 characters of A-Z, a-z, 0-9, _ and - (Telegram's rule for a "
                "webhook's secret token; an empty one would let anyone post updates); make one "
                "with python3 -c 'import secrets; print(secrets.token_urlsafe(32))'"
            )
        return secret

    @model_validator(mode="after")
    def _webhook_needs_secret(self) -> TelegramConfig:
        if self.mode == "webhook" and self.webhook_secret is None:
            raise ValueError("webhook mode needs webhook_secret (Telegram sends it back to us)")
        return self


TELEGRAM_SECTION = PlatformSection(
    name="telegram",
    title="Telegram",
    model=TelegramConfig,
    operator_key="telegram_user_id",
    numbers=True,
    allowed="chats",
    conversation="chat",
    topics=True,
)
