"""A workspace's chat platforms in the admin's file: `[workspaces.slack]`,
`[workspaces.telegram]` and the terminal's `[workspaces.console]`."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import Field, SecretStr, field_validator, model_validator

from config.strict import Strict

# Telegram's rule for setWebhook's secret_token.
_WEBHOOK_SECRET = re.compile(r"[A-Za-z0-9_-]{1,256}")


def present(secret: SecretStr | None) -> SecretStr | None:
    """An empty secret would check nothing (an absent header matches an empty secret, and
    anyone can sign with an empty key): refused, so no door opens by a variable left empty."""
    if secret is not None and not secret.get_secret_value().strip():
        raise ValueError("is empty; set it (an empty secret would let anyone in)")
    return secret


class SuggestedPrompt(Strict):
    title: str = Field(min_length=1, max_length=75)
    message: str = Field(min_length=1)


DEFAULT_SUGGESTED_PROMPTS = (
    SuggestedPrompt(title="What are you working on?", message="/status"),
    SuggestedPrompt(title="Commands", message="/help"),
)


class SlackConfig(Strict):
    team_id: str
    bot_token: SecretStr
    signing_secret: SecretStr | None = None  # HTTP mode: how we know a request is Slack's
    app_token: SecretStr | None = None  # Socket Mode instead of HTTP
    api_base_url: str = "https://slack.com/api/"
    channels: list[str] = []
    request_timeout_s: float = Field(10.0, gt=0)
    # The slash command set up in the Slack app (`/switchboard status`, `/switchboard stop`).
    slash_command: Annotated[str, Field(pattern=r"^/[a-z0-9_-]{1,31}$")] = "/switchboard"
    # Offered when an operator opens a new assistant thread with the app (at most 4); [] offers
    # none.
    suggested_prompts: list[SuggestedPrompt] = Field(
        default_factory=lambda: list(DEFAULT_SUGGESTED_PROMPTS), max_length=4
    )

    _present = field_validator("bot_token", "signing_secret", "app_token")(present)

    @model_validator(mode="after")
    def _one_way_in(self) -> SlackConfig:
        if self.signing_secret is None and self.app_token is None:
            raise ValueError(
                "set signing_secret (events over HTTP at /slack/events) or app_token (Socket Mode)"
            )
        return self


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


class ConsoleConfig(Strict):
    operator: str
    enabled: bool = True
