"""What the doors check requests with, per workspace: made from the config in the main
process (`door_keys`), sent as JSON to the door process, and held there (`Keys`) until the
next reload sends new ones."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from slack_sdk.signature import SignatureVerifier

from adapters.doors import slack
from adapters.doors.polling import PollingKey

if TYPE_CHECKING:  # the door process never loads the config's models
    from config.schema import SwitchboardConfig


def door_keys(config: SwitchboardConfig) -> dict[str, Any]:
    """What the doors check requests with, as JSON (it goes to the door process): each Slack
    workspace's team and signing secret, each Telegram webhook's secret token; and the bots
    to poll for."""
    slack_keys = [
        {"workspace": w.id, "team": w.slack.team_id, "secret": secret.get_secret_value()}
        for w in config.workspaces
        if w.slack is not None and (secret := w.slack.signing_secret) is not None
    ]
    webhooks = {
        w.id: secret.get_secret_value()
        for w in config.workspaces
        if w.telegram is not None
        and w.telegram.mode == "webhook"
        and (secret := w.telegram.webhook_secret) is not None
    }
    polling = [
        {"workspace": w.id, "token": bot.bot_token.get_secret_value(), "api": bot.api_base_url}
        for w in config.workspaces
        if (bot := w.telegram) is not None and bot.mode == "polling"
    ]
    return {"polling": polling, "slack": slack_keys, "telegram": webhooks}


def has_doors(keys: dict[str, Any]) -> bool:
    return any(keys.values())


class Keys:
    """What checks each workspace's requests, as last applied."""

    def __init__(self, keys: dict[str, Any] | None = None) -> None:
        self.slack: list[slack.SlackKey] = []
        self.telegram: dict[str, str] = {}  # workspace id -> webhook secret token
        self.polling: list[PollingKey] = []  # the bots that poll
        if keys is not None:
            self.update(keys)

    def update(self, keys: dict[str, Any]) -> None:
        self.slack = [
            slack.SlackKey(k["workspace"], k["team"], SignatureVerifier(k["secret"]))
            for k in keys["slack"]
        ]
        self.telegram = dict(keys["telegram"])
        self.polling = [PollingKey(k["workspace"], k["token"], k["api"]) for k in keys["polling"]]
