"""The HTTP surface (healthz, metrics) and the CLI's check-config and status."""

from __future__ import annotations

from pathlib import Path

import aiohttp
import pytest

from adapters.cli import main
from tests.adapters.console_harness import ConsoleHarness, make_config
from tests.fakes.anthropic_api import FakeAnthropic

ROOT = Path(__file__).resolve().parents[2]


async def test_healthz_and_metrics(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    console = await ConsoleHarness(make_config(db_path, anthropic_api)).start()
    cleanup.append(console)
    console.type("hello")
    await console.expect("agent> ok")
    await console.app.bridge.settle()
    base = f"http://127.0.0.1:{console.app.port}"
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{base}/healthz") as response:
            assert response.status == 200 and (await response.json())["status"] == "ok"
        async with http.get(f"{base}/metrics") as response:
            body = await response.text()
    assert 'switchboard_messages_in_total{trust="trusted_operator",workspace="local"} 1' in body
    assert 'switchboard_deliveries_total{status="accepted_by_transport"} 1' in body
    assert "switchboard_turn_duration_seconds_count 1" in body


def test_check_config_summarizes_the_default(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--config", str(ROOT / "config/switchboard.toml"), "check-config"]) == 0
    out = capsys.readouterr().out
    assert "workspace local: console" in out and "agent assistant (default)" in out


def test_check_config_fails_with_the_key_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(
        (ROOT / "config/switchboard.toml")
        .read_text()
        .replace('queue_mode = "steer"', 'queue_mode = "steer"\nqueue_mod = "x"')
    )
    assert main(["--config", str(bad), "check-config"]) == 2
    err = capsys.readouterr().err
    assert f"{bad}: 1 problem(s)" in err
    assert 'workspaces[0].queue_mod ("local"): unknown key' in err


def test_example_full_config_is_valid(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in (
        "ACME_SLACK_BOT_TOKEN",
        "ACME_SLACK_SIGNING_SECRET",
        "ACME_SLACK_APP_TOKEN",
        "ACME_TELEGRAM_BOT_TOKEN",
        "ACME_TELEGRAM_WEBHOOK_SECRET",
    ):
        monkeypatch.setenv(name, "placeholder-not-a-secret")
    assert main(["--config", str(ROOT / "config/example-full.toml"), "check-config"]) == 0
    out = capsys.readouterr().out
    assert "placeholder-not-a-secret" not in out, "secrets are never printed"


async def test_status_lists_sessions_and_deliveries(
    anthropic_api: FakeAnthropic, db_path: Path, tmp_path: Path
) -> None:
    config = make_config(db_path, anthropic_api)
    console = await ConsoleHarness(config).start()
    console.type("hello")
    await console.expect("agent> ok")
    await console.app.bridge.settle()
    await console.close()
    from adapters.cli import status

    report = await status(config)
    assert "sessions: 1" in report
    assert "deliveries: accepted_by_transport 1" in report
    assert "workspace local: 0 undelivered notification(s)" in report
