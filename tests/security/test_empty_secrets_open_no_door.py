"""A secret left empty (a variable set to "" in the environment or `bot.env`) opens no door: an
empty Telegram webhook secret matched a request without the header in the door process (and
`setWebhook` went out without a `secret_token`), and an empty Slack signing secret lets anyone
sign. The admin learns it from `check-config` and from `run`, which refuse the file, naming the
key; the secret itself is never printed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adapters.cli_process import switchboard
from tests.config_file import workspace, write_config

OPERATOR = {"id": "alice", "primary": True, "telegram_user_id": 1001, "slack_user_id": "UALICE"}


def telegram_webhook(secret: str) -> dict[str, object]:
    return {"bot_token": "123:abc", "mode": "webhook", "webhook_secret": secret}


def slack_events(secret: str) -> dict[str, object]:
    return {"team_id": "T1", "bot_token": "xoxb-1", "signing_secret": secret}


@pytest.mark.parametrize(
    ("platform", "table", "key"),
    [
        ("telegram", telegram_webhook("${SB_EMPTY}"), "workspaces[0].telegram.webhook_secret"),
        ("telegram", telegram_webhook("  "), "workspaces[0].telegram.webhook_secret"),
        ("telegram", telegram_webhook("a b\nc"), "workspaces[0].telegram.webhook_secret"),
        ("slack", slack_events("${SB_EMPTY}"), "workspaces[0].slack.signing_secret"),
        ("telegram", {"bot_token": "${SB_EMPTY}"}, "workspaces[0].telegram.bot_token"),
    ],
)
def test_a_secret_left_empty_is_refused_by_name(
    tmp_path: Path, platform: str, table: dict[str, object], key: str
) -> None:
    path = write_config(
        tmp_path / "switchboard.toml",
        db=tmp_path / "sb.db",
        workspaces=[workspace("acme", [OPERATOR], **{platform: table})],  # type: ignore[arg-type]
        public_url="https://bot.example.com",
    )
    for command in ("check-config", "run"):
        result = switchboard(command, "--config", path, env={"SB_EMPTY": ""})
        assert result.returncode != 0, f"{command} took the file:\n{result.stdout}"
        assert key in result.stderr, result.stderr
        assert "Traceback" not in result.stderr
