"""A workspace's chat platforms in the admin's file: `[workspaces.slack]`,
`[workspaces.telegram]` and the terminal's `[workspaces.console]`."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, SecretStr, model_validator

from config.strict import Strict


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

    @model_validator(mode="after")
    def _webhook_needs_secret(self) -> TelegramConfig:
        if self.mode == "webhook" and self.webhook_secret is None:
            raise ValueError("webhook mode needs webhook_secret (Telegram sends it back to us)")
        return self


class ConsoleConfig(Strict):
    operator: str
    enabled: bool = True
