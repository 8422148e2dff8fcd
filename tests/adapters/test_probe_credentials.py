"""`switchboard check-config --probe`, run as an admin types it, against the fake Bot API,
Slack Web API and Anthropic API: each credential gets one line saying what it belongs to,
or the workspace, the key path and the platform's own reason; the exit status says whether
all passed; no secret is printed."""

from __future__ import annotations

from pathlib import Path

from tests.adapters.cli_process import run_to_end
from tests.config_file import anthropic, workspace, write_config
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram

KEY = "probe-model-key-right"
APP_TOKEN = "xapp-1-probe-app-token"


def config(
    tmp_path: Path,
    telegram: FakeTelegram,
    slack: FakeSlack,
    anthropic_api: FakeAnthropic,
    *,
    telegram_token: str | None = None,
    slack_token: str | None = None,
    team_id: str = "T1",
    key: str = KEY,
    model: str = "claude-test-model",
) -> Path:
    team = next(t for t in slack.teams.values() if t.team_id == "T1")
    acme = workspace(
        "acme",
        [{"id": "alice", "primary": True, "telegram_user_id": 1001, "slack_user_id": "UALICE"}],
        telegram={
            "bot_token": telegram_token or telegram.token,
            "api_base_url": telegram.base_url,
        },
        slack={
            "team_id": team_id,
            "bot_token": slack_token or team.token,
            "app_token": APP_TOKEN,
            "api_base_url": slack.base_url,
        },
    )
    provider = {**anthropic(anthropic_api.url, api_key=key), "model": model}
    return write_config(
        tmp_path / "switchboard.toml", db=tmp_path / "sb.db", provider=provider, workspaces=[acme]
    )


async def test_right_credentials_each_say_what_they_belong_to(
    tmp_path: Path, telegram_api: FakeTelegram, slack_api: FakeSlack, anthropic_api: FakeAnthropic
) -> None:
    anthropic_api.api_key = KEY
    next(t for t in slack_api.teams.values() if t.team_id == "T1").app_token = APP_TOKEN
    path = config(tmp_path, telegram_api, slack_api, anthropic_api)
    status, out = await run_to_end("check-config", "--config", path, "--probe")
    assert status == 0, out
    assert (
        "ok    provider (anthropic, claude-test-model): model claude-test-model (Claude Test Model)"
        in out
    )
    assert "ok    workspace acme: telegram.bot_token: bot @switchboard_test_bot (id " in out
    assert "ok    workspace acme: slack.bot_token: team T1 (T1), bot user UBOTT1" in out
    assert "ok    workspace acme: slack.app_token: Socket Mode connections allowed" in out


async def test_wrong_credentials_are_named_with_the_platforms_reason(
    tmp_path: Path, telegram_api: FakeTelegram, slack_api: FakeSlack, anthropic_api: FakeAnthropic
) -> None:
    anthropic_api.api_key = KEY
    wrong = {
        "telegram_token": "999:wrong",
        "slack_token": "xoxb-wrong",
        "key": "probe-model-key-wrong",
    }
    path = config(tmp_path, telegram_api, slack_api, anthropic_api, **wrong)
    status, out = await run_to_end("check-config", "--probe", "--config", path)
    assert status == 1, out
    assert (
        "FAIL  provider (anthropic, claude-test-model): Anthropic API 401 authentication_error: "
        "invalid x-api-key; check api_key (else ANTHROPIC_API_KEY)" in out
    )
    assert (
        "FAIL  workspace acme: telegram.bot_token: Telegram refused the token: Unauthorized" in out
    )
    assert "FAIL  workspace acme: slack.bot_token: Slack said invalid_auth" in out
    assert "FAIL  workspace acme: slack.app_token: Slack said invalid_auth" in out
    for secret in [*wrong.values(), APP_TOKEN]:
        assert secret not in out


async def test_a_token_of_another_team_and_an_unknown_model_are_refused(
    tmp_path: Path, telegram_api: FakeTelegram, slack_api: FakeSlack, anthropic_api: FakeAnthropic
) -> None:
    path = config(
        tmp_path, telegram_api, slack_api, anthropic_api, team_id="T9", model="claude-nope"
    )
    status, out = await run_to_end("check-config", "--config", path, "--probe")
    assert status == 1, out
    assert (
        "FAIL  provider (anthropic, claude-nope): Anthropic has no model 'claude-nope' for this "
        "key; set model to one this key may use" in out
    )
    assert "slack.bot_token: the token belongs to Slack team T1 (T1), not team_id T9" in out
    assert "ok    workspace acme: telegram.bot_token" in out


async def test_without_probe_check_config_stays_offline(
    tmp_path: Path, telegram_api: FakeTelegram, slack_api: FakeSlack, anthropic_api: FakeAnthropic
) -> None:
    path = config(tmp_path, telegram_api, slack_api, anthropic_api, telegram_token="999:wrong")
    status, out = await run_to_end("check-config", "--config", path)
    assert status == 0, out
    assert "probes:" not in out and telegram_api.calls == []
