"""What a tool's process is given: a command tool and an MCP stdio server each get a small
environment (PATH, HOME, LANG, TZ and the variables their own config names), never the
process's secrets. A command tool once inherited the whole environment: a tool running `env`
handed every workspace's bot tokens, the admin tokens and the model key to the model.

An operator's Telegram message; the fake model calls the tool; what the model was sent back is
what the tool saw."""

from __future__ import annotations

import io
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from adapters.server.app import App
from config import load
from tests.adapters.mcp.test_mcp_tools import stdio_server
from tests.fakes.anthropic_api import FakeAnthropic, text, tools
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until
from tests.security import secret_config

ALICE = 1001  # the operator, in her DM with the bot
ENV_TOOL = {
    "name": "environment",
    "description": "Print the environment",
    "command": ["sh", "-c", "env"],
    "env": {"TOOL_SETTING": "named-for-the-tool"},
}


@pytest.fixture
async def started(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    slack_api: FakeSlack,
) -> AsyncIterator[tuple[App, dict[str, str]]]:
    server = {**stdio_server(tmp_path / "notes"), "env": {"DEMO_SETTING": "named-for-the-server"}}
    path, secrets = secret_config.write(
        tmp_path,
        tmp_path / "sb.db",
        anthropic_api,
        telegram_api,
        slack_api,
        monkeypatch,
        acme_extra={"tools": [ENV_TOOL], "mcp_servers": [server]},
        agent_tools=("notify_operator", "environment", "demo.*"),
    )
    app = App(load(path), stdin=io.StringIO(), stdout=io.StringIO(), path=path)
    await app.start()
    yield app, secrets
    await app.stop()


async def tool_result(anthropic_api: FakeAnthropic, telegram_api: FakeTelegram, tool: str) -> str:
    """Alice asks; the model calls `tool`; the tool_result the model was sent, as sent."""
    anthropic_api.script = [tools((tool, {})), text("looked")]
    telegram_api.push_message("what do you see?", user=ALICE)
    await until(lambda: "looked" in telegram_api.chat(ALICE), wait_s=20)
    [result] = anthropic_api.tool_results()
    assert not result.get("is_error"), result
    return str(result["content"])


def leaked(seen: str, secrets: dict[str, str]) -> list[str]:
    return [name for name, value in secrets.items() if value in seen]


async def test_a_command_tool_gets_path_and_its_named_variables_but_no_secret(
    started: tuple[App, dict[str, str]],
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
) -> None:
    _, secrets = started
    seen = await tool_result(anthropic_api, telegram_api, "environment")
    assert "PATH=" in seen, "the tool finds its programs"
    assert "TOOL_SETTING=named-for-the-tool" in seen, "what its config names is passed"
    assert "DEMO_SETTING" not in seen, "another tool's variables are not"
    assert leaked(seen, secrets) == []


async def test_an_mcp_stdio_server_gets_its_named_variables_but_no_secret(
    started: tuple[App, dict[str, str]],
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
) -> None:
    _, secrets = started
    seen = await tool_result(anthropic_api, telegram_api, "demo__environment")
    environment = json.loads(seen)["result"]
    assert "PATH" in environment
    assert environment["DEMO_SETTING"] == "named-for-the-server"
    assert "TOOL_SETTING" not in environment
    assert leaked(seen, secrets) == []
