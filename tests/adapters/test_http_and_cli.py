"""The HTTP surface (healthz, metrics), and `switchboard status` after real work."""

from __future__ import annotations

import os
import re
from pathlib import Path

import aiohttp

from config import load
from config.schema import BUILTIN_TOOLS
from runtime.events import EventType
from tests.adapters.approvals.telegram_approvals import deploy_tool
from tests.adapters.cli_process import run_to_end
from tests.adapters.console_harness import ConsoleHarness, config_file, make_config
from tests.adapters.test_metrics import parse, value
from tests.fakes.anthropic_api import FakeAnthropic, text, tools
from tests.runtime.helpers import wait_for


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


async def test_status_says_whether_switchboard_runs_and_what_each_session_does(
    anthropic_api: FakeAnthropic, db_path: Path
) -> None:
    """`switchboard status` as the admin types it, while a turn runs, while one waits for the
    console's operator (whose id is `you`) to approve a call, then once it stopped."""
    deploy = deploy_tool(db_path.parent)
    agent_tools = (*BUILTIN_TOOLS, "deploy")
    file = config_file(db_path, anthropic_api, agent_tools=agent_tools, tools=[deploy])
    console = await ConsoleHarness(load(file)).start()
    try:
        console.type("hello")
        await console.expect("agent> ok")
        anthropic_api.script = [tools(("sleep", {"seconds": 60})), text("done")]
        console.type("wait a minute")
        await wait_for(console.app.runtime, EventType.TOOL_STARTED)

        code, out = await run_to_end("status", "--config", file)

        assert code == 0, out
        running = f"Switchboard is running: process {os.getpid()} on SQLite file {db_path}, since"
        assert out.startswith(running), out
        assert "Workspace local: 1 of 1 session(s) active.\n" in out, out
        assert "  - console (you) \u00b7 assistant \u00b7 running tool `sleep` for " in out
        assert "Deliveries: 1 delivered." in out, "hello's answer"
        assert "  Undelivered notifications: none." in out
        assert "Pairing codes waiting for approval: none.\nPaired operators: none.\n" in out
        console.type("/stop")
        await console.expect("Stopped.")
        anthropic_api.script = [tools(("deploy", {"host": "web-1"})), text("deployed")]
        console.type("deploy web-1")
        await console.expect("approve?> ")

        code, out = await run_to_end("status", "--config", file)

        waits = "waiting for you to approve `deploy` for "  # `you`: the console's operator
        assert f"  - console (you) \u00b7 assistant \u00b7 {waits}" in out, out
        console.type("/deny")
        await console.expect("agent> deployed")
        await console.app.bridge.settle()
    finally:
        await console.close()

    code, out = await run_to_end("status", "--config", file)

    assert code == 0, out
    assert out.startswith(f"Switchboard is not running: no process has SQLite file {db_path}")
    assert "Workspace local: 0 of 1 session(s) active.\n  Nothing running.\n" in out, out
    assert re.search(r"^Deliveries: \d+ delivered\.$", out, re.MULTILINE), out
    assert "accepted_by_transport" not in out
