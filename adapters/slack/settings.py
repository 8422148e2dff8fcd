"""Slack's section of a workspace in the admin's file, `[workspaces.slack]`, and how its
operators are named there (`slack_user_id`): what the config learns of Slack
(`config/platform_sections.py`)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, SecretStr, field_validator, model_validator

from config.platform_sections import PlatformSection
from config.platforms import present
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

    _present = field_validator("bot_token", "signing_secret", "app_token")(present)

    @model_validator(mode="after")
    def _one_way_in(self) -> SlackConfig:
        if self.signing_secret is None and self.app_token is None:
            raise ValueError(
                "set signing_secret (events over HTTP at /slack/events) or app_token (Socket Mode)"
            )
        return self


SLACK_SECTION = PlatformSection(
    name="slack",
    title="Slack",
    model=SlackConfig,
    operator_key="slack_user_id",
    numbers=False,
    allowed="channels",
    conversation="channel",
    distinct="team_id",
)
