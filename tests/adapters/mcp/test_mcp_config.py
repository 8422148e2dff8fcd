"""MCP servers in the config file, through the console script as an admin types it:
`check-config` validates their shape and names them; `check-config --probe` starts each one
and lists its tools, or says which one failed and why."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from adapters.server.app import App
from tests.adapters.cli_process import ROOT, switchboard
from tests.adapters.mcp.test_mcp_tools import SERVER
from tests.adapters.telegram_harness import start_app
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.telegram_api import FakeTelegram

DEFAULT = (ROOT / "config/switchboard.toml").read_text()


def config_with(tmp_path: Path, servers: str, tools: str = '"demo.*"') -> Path:
    text = DEFAULT.replace('path = "var/switchboard.db"', f'path = "{tmp_path / "sb.db"}"')
    offered = 'tools = ["notify_operator", "sleep", "spawn_agent", "schedule_wakeup", "disk_usage"]'
    assert offered in text, "the embedded config's agent tools changed: update this test"
    text = text.replace(offered, f'tools = ["notify_operator", {tools}]')
    path = tmp_path / "switchboard.toml"
    path.write_text(text + servers)
    return path


def stdio(notes: Path, name: str = "demo", command: str = sys.executable) -> str:
    return (
        f'\n  [[workspaces.mcp_servers]]\n  name = "{name}"\n  command = "{command}"\n'
        f'  args = ["{SERVER}", "--notes", "{notes}"]\n'
    )


def test_check_config_names_each_server_and_probe_lists_its_tools(tmp_path: Path) -> None:
    path = config_with(tmp_path, stdio(tmp_path / "notes"))
    checked = switchboard("check-config", "--config", path)
    assert checked.returncode == 0, checked.stderr
    assert f"mcp server demo: stdio {sys.executable} {SERVER}" in checked.stdout
    probed = switchboard("check-config", "--config", path, "--probe")
    assert probed.returncode == 0, probed.stdout + probed.stderr
    assert (
        "ok    workspace local: mcp_servers[0] (demo): 6 tool(s): add, broken, environment, "
        "slow, snapshot, weather" in probed.stdout
    )


def test_probe_says_which_server_failed_and_why(tmp_path: Path) -> None:
    servers = stdio(tmp_path / "notes") + stdio(
        tmp_path / "n2", name="gone", command=str(tmp_path / "no-such-server")
    )
    path = config_with(tmp_path, servers)
    probed = switchboard("check-config", "--probe", "--config", path)
    assert probed.returncode == 1
    assert "ok    workspace local: mcp_servers[0] (demo)" in probed.stdout
    assert "FAIL  workspace local: mcp_servers[1] (gone): " in probed.stdout
    assert "no-such-server" in probed.stdout


def test_a_token_in_a_servers_url_is_never_printed(tmp_path: Path) -> None:
    token = "sekrit-token-123"
    server = (
        '\n  [[workspaces.mcp_servers]]\n  name = "remote"\n'
        f'  url = "http://127.0.0.1:9/mcp?key={token}"\n  requires_approval = ["scale"]\n'
    )
    path = config_with(tmp_path, server, tools='"remote.*"')
    checked = switchboard("check-config", "--config", path)
    assert checked.returncode == 0, checked.stderr
    assert "mcp server remote: HTTP http://127.0.0.1:9/mcp?key=*** (timeout 60s, " in checked.stdout
    assert "approval of scale within 600s" in checked.stdout
    probed = switchboard("check-config", "--probe", "--config", path)
    assert probed.returncode == 1
    assert "FAIL  workspace local: mcp_servers[0] (remote): " in probed.stdout
    assert token not in probed.stdout + probed.stderr + checked.stdout + checked.stderr


def test_a_wrong_server_shape_or_reference_is_refused_with_its_key(tmp_path: Path) -> None:
    both = stdio(tmp_path) + '  url = "http://127.0.0.1:9/mcp"\n'
    refused = switchboard("check-config", "--config", config_with(tmp_path, both))
    assert refused.returncode == 2
    assert "set either command (a stdio server) or url (streamable HTTP)" in refused.stderr
    unknown = config_with(tmp_path, stdio(tmp_path), tools='"github.*"')
    refused = switchboard("check-config", "--config", unknown)
    assert refused.returncode == 2
    assert "'github.*' names MCP server 'github'" in refused.stderr


async def test_stopping_leaves_no_server_process_behind(
    db_path: Path, tmp_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    """The server is started through a shell that stays its parent: the whole process group
    goes when Switchboard stops."""
    notes = tmp_path / "notes"
    app: App = await start_app(
        db_path,
        anthropic_api,
        telegram_api,
        agent_tools=["demo.add"],
        acme_extra={
            "mcp_servers": [
                {
                    "name": "demo",
                    "command": "/bin/sh",
                    "args": ["-c", f"{sys.executable} {SERVER} --notes {notes}; true"],
                }
            ]
        },
    )
    pid = int((notes / "pid").read_text().split()[0])
    os.kill(pid, 0)  # running
    await app.stop()
    for _ in range(100):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the MCP server outlived Switchboard")
