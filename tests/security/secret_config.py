"""A config whose secrets come from every place a deployment keeps them: the process's
environment (the bot tokens, the global admin token, the model key the Anthropic SDK reads
itself) and the env file beside the config (`switchboard.env`: a signing secret, an admin's
token, and a value the config does not name). Two workspaces: `acme` on Telegram
(polling; operator alice, 1001; its admin `lead`), `globex` on Slack team T2."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adapters.slack_harness import GLOBEX_SECRET
from tests.adapters.telegram_harness import ALICE
from tests.config_file import Table, workspace, write_config
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram

MODEL_KEY = "fake-model-key-from-the-environment-0042"
GLOBAL_ADMIN_TOKEN = "global-admin-token-from-the-environment-01"
ACME_ADMIN_TOKEN = "acme-admin-token-from-the-env-file-0002"
SPARE_VALUE = "spare-value-of-the-env-file-0003"  # in the env file, named by nothing


def write(
    folder: Path,
    db: Path | str,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    slack_api: FakeSlack,
    monkeypatch: pytest.MonkeyPatch,
    *,
    acme_extra: Table | None = None,
    agent_tools: tuple[str, ...] = ("notify_operator",),
    logging: Table | None = None,
) -> tuple[Path, dict[str, str]]:
    """The config file (and its env file, and the environment), and every secret by name;
    `logging`: the config's `[logging]` table."""
    globex_token = next(t.token for t in slack_api.teams.values() if t.team_id == "T2")
    environment = {
        "ANTHROPIC_API_KEY": MODEL_KEY,  # the provider names no key: the SDK reads this one
        "SB_TELEGRAM_TOKEN": telegram_api.token,
        "SB_SLACK_TOKEN": globex_token,
        "SB_ADMIN_TOKEN": GLOBAL_ADMIN_TOKEN,
    }
    env_file = {
        "SB_SLACK_SECRET": GLOBEX_SECRET,
        "SB_ACME_ADMIN_TOKEN": ACME_ADMIN_TOKEN,
        "SB_SPARE": SPARE_VALUE,
    }
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    anthropic_api.api_key = MODEL_KEY  # the fake refuses any other key
    bot = {"bot_token": "${SB_TELEGRAM_TOKEN}", "api_base_url": telegram_api.base_url}
    acme = workspace("acme", [ALICE], telegram=bot, agent_tools=agent_tools)
    acme = {**acme, "admins": [{"id": "lead", "token": "${SB_ACME_ADMIN_TOKEN}"}]}
    team = {
        "team_id": "T2",
        "bot_token": "${SB_SLACK_TOKEN}",
        "signing_secret": "${SB_SLACK_SECRET}",
        "api_base_url": slack_api.base_url,
    }
    globex = workspace("globex", [{"id": "bob", "primary": True, "slack_user_id": "UBOB"}])
    globex = {**globex, "slack": team}
    path = folder / "switchboard.toml"
    (folder / "switchboard.env").write_text(
        "".join(f"{name}={value}\n" for name, value in env_file.items())
    )
    write_config(
        path,
        db=db,
        provider={"kind": "anthropic", "model": "claude-test-model", "base_url": anthropic_api.url},
        admin={"token": "${SB_ADMIN_TOKEN}"},
        logging=logging,
        workspaces=[{**acme, **(acme_extra or {})}, globex],
    )
    return path, {**environment, **env_file}
