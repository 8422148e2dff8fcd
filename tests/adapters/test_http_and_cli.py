"""The HTTP surface (healthz, metrics), and `switchboard status` after real work."""

from __future__ import annotations

from pathlib import Path

import aiohttp

from tests.adapters.cli_process import switchboard
from tests.adapters.console_harness import ConsoleHarness, config_file, make_config
from tests.adapters.test_metrics import parse, value
from tests.fakes.anthropic_api import FakeAnthropic


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
            m = parse(await response.text())
    counted = "switchboard_messages_in_total"
    assert value(m, counted, workspace="local", trust="trusted_operator") == 1
    assert value(m, "switchboard_deliveries_total", status="accepted_by_transport") == 1
    assert value(m, "switchboard_turn_duration_seconds_count") == 1
    assert value(m, "switchboard_platform_up", platform="console", workspace="local") == 1


async def test_status_lists_sessions_and_deliveries(
    anthropic_api: FakeAnthropic, db_path: Path
) -> None:
    config = make_config(db_path, anthropic_api)
    console = await ConsoleHarness(config).start()
    console.type("hello")
    await console.expect("agent> ok")
    await console.app.bridge.settle()
    await console.close()
    file = config_file(db_path, anthropic_api, agent_tools=[])

    result = switchboard("status", "--config", file)  # as the admin types it

    assert result.returncode == 0, result.stderr
    assert "sessions: 1" in result.stdout
    assert "deliveries: accepted_by_transport 1" in result.stdout
    assert "workspace local: 0 undelivered notification(s)" in result.stdout
