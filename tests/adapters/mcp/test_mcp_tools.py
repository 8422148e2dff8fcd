"""Tools from real MCP servers (written with the SDK's `MCPServer`, over stdio and streamable
HTTP on loopback), end to end: an operator's Telegram message, the fake Anthropic API asking
for the tool, the server running it, the answer in the chat."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import signal
import socket
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from adapters.server.app import App
from tests.adapters.telegram_harness import start_app
from tests.fakes.anthropic_api import FakeAnthropic, text, tools
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until

SERVER = Path(__file__).resolve().parents[2] / "fakes" / "mcp_server.py"


def stdio_server(notes: Path, name: str = "demo") -> dict[str, Any]:
    return {"name": name, "command": sys.executable, "args": [str(SERVER), "--notes", str(notes)]}


def tool_results(anthropic_api: FakeAnthropic) -> list[dict[str, Any]]:
    """Every tool_result the model was sent, its content parsed (our envelope is JSON)."""
    return [
        {**block, "content": json.loads(block["content"])} for block in anthropic_api.tool_results()
    ]


@pytest.fixture
async def app(
    db_path: Path, tmp_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> AsyncIterator[App]:
    app = await start_app(
        db_path,
        anthropic_api,
        telegram_api,
        agent_tools=["notify_operator", "demo.*"],
        acme_extra={"mcp_servers": [stdio_server(tmp_path / "notes")]},
    )
    yield app
    await app.stop()


async def test_the_model_is_offered_the_servers_tools_and_its_answer_arrives(
    app: App, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    anthropic_api.script = [tools(("demo__add", {"a": 2, "b": 3})), text("2 + 3 is 5")]
    telegram_api.push_message("add 2 and 3", user=1001)
    await until(lambda: "2 + 3 is 5" in telegram_api.chat(1001), wait_s=20)
    offered = {t["name"]: t for t in anthropic_api.requests[0]["tools"]}
    assert set(offered) >= {"demo__add", "demo__slow", "demo__broken", "demo__weather"}
    assert offered["demo__add"]["input_schema"]["required"] == ["a", "b"]
    assert "MCP server demo" in offered["demo__add"]["description"]
    [result] = tool_results(anthropic_api)
    assert result["content"]["status"] == "success"
    assert result["content"]["summary_text"] == "5"
    assert result["content"]["result"] == {"result": 5}


async def test_a_failing_tool_and_structured_content_reach_the_model_in_the_envelope(
    app: App, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    anthropic_api.script = [
        tools(("demo__broken", {}), ("demo__weather", {"city": "Oslo"})),
        text("one failed, one worked"),
    ]
    telegram_api.push_message("try both", user=1001)
    await until(lambda: "one failed, one worked" in telegram_api.chat(1001), wait_s=20)
    broken, weather = tool_results(anthropic_api)
    assert broken["content"]["status"] == "error"
    assert broken["content"]["error"]["kind"] == "tool_error"
    assert weather["content"]["result"] == {"city": "Oslo", "celsius": 21, "sky": "clear"}
    assert anthropic_api.refused == [], "the transcript stayed valid"


async def test_a_picture_the_tool_returns_is_shown_to_the_model_as_an_image(
    app: App, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    anthropic_api.script = [tools(("demo__snapshot", {"width": 4, "height": 3})), text("green")]
    telegram_api.push_message("how does the dashboard look?", user=1001)
    await until(lambda: "green" in telegram_api.chat(1001), wait_s=20)
    [result] = anthropic_api.tool_results()
    words, label, image = result["content"]
    envelope = json.loads(words["text"])
    assert envelope["summary_text"].startswith("the dashboard, all green")
    assert "[image 1, image/png: shown after this result]" in envelope["summary_text"]
    assert "iVBOR" not in words["text"], "the bytes are not in the text"
    assert label == {"type": "text", "text": "[File: demo.snapshot image 1 (image/png, 73 bytes)]"}
    assert image["type"] == "image" and image["source"]["media_type"] == "image/png"
    assert base64.b64decode(image["source"]["data"]).startswith(b"\x89PNG")
    assert anthropic_api.refused == []
    # The next turn carries the picture again, from the store.
    anthropic_api.script = [text("still green")]
    telegram_api.push_message("and now?", user=1001)
    await until(lambda: "still green" in telegram_api.chat(1001), wait_s=20)
    assert "iVBOR" in json.dumps(anthropic_api.requests[-1]["messages"])


async def test_stop_during_a_slow_tool_cancels_it_at_the_server(
    app: App, tmp_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    notes = tmp_path / "notes"
    anthropic_api.script = [tools(("demo__slow", {"seconds": 60})), text("never")]
    telegram_api.push_message("work a minute", user=1001)
    calls = notes / "calls"
    await until(lambda: calls.exists() and "slow 60" in calls.read_text(), wait_s=20)

    def shown() -> str:
        return str([c.params for c in telegram_api.calls])

    await until(lambda: "running demo.slow" in shown(), wait_s=10)  # the progress names it
    telegram_api.push_message("/stop", user=1001)
    await until(lambda: (notes / "cancelled").exists(), wait_s=10)
    await app.bridge.settle()
    assert "never" not in telegram_api.chat(1001)
    run = await app.runtime.store.latest_run(next(iter(app.runtime.sessions)))
    assert run is not None and run.status.value == "stopped"


async def test_a_killed_server_is_started_again_and_its_tools_come_back(
    app: App, tmp_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    notes = tmp_path / "notes"
    server = app.runtime.tools.mcp.servers["demo"]
    first = int((notes / "pid").read_text().split()[0])
    os.kill(first, signal.SIGKILL)
    anthropic_api.script = [tools(("demo__add", {"a": 1, "b": 1})), text("tried")]
    telegram_api.push_message("add 1 and 1", user=1001)
    await until(lambda: "tried" in telegram_api.chat(1001), wait_s=20)
    [result] = tool_results(anthropic_api)
    assert result["content"]["error"]["kind"] == "mcp_unavailable", result
    await until(lambda: server.connected and len((notes / "pid").read_text().split()) == 2, 20)
    anthropic_api.script = [tools(("demo__add", {"a": 1, "b": 1})), text("now it works")]
    telegram_api.push_message("again", user=1001)
    await until(lambda: "now it works" in telegram_api.chat(1001), wait_s=20)
    result = tool_results(anthropic_api)[-1]
    assert result["content"]["summary_text"] == "2"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_a_streamable_http_server_on_loopback(
    db_path: Path, tmp_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    port = free_port()
    notes = tmp_path / "http-notes"
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(SERVER),
        "--http",
        str(port),
        "--notes",
        str(notes),
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        await until(lambda: _listening(port), wait_s=20)
        app = await start_app(
            db_path,
            anthropic_api,
            telegram_api,
            agent_tools=["web.weather"],
            acme_extra={
                "mcp_servers": [
                    {"name": "web", "url": f"http://127.0.0.1:{port}/mcp", "timeout_s": 10}
                ]
            },
        )
        try:
            anthropic_api.script = [tools(("web__weather", {"city": "Rome"})), text("sunny")]
            telegram_api.push_message("weather in Rome?", user=1001)
            await until(lambda: "sunny" in telegram_api.chat(1001), wait_s=20)
            offered = [t["name"] for t in anthropic_api.requests[0]["tools"]]
            assert offered == ["web__weather", "remember", "recall", "forget"]  # memory: on
            [result] = tool_results(anthropic_api)
            assert result["content"]["result"]["city"] == "Rome"
        finally:
            await app.stop()
    finally:
        process.kill()
        await process.wait()


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


async def test_a_reload_starts_a_new_server_and_leaves_the_unchanged_one_connected(
    app: App, tmp_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    assert app.path is not None
    demo_pid = (tmp_path / "notes" / "pid").read_text()
    changed = app.path.read_text().replace('"demo.*"', '"demo.*", "more.add"')
    more = stdio_server(tmp_path / "more-notes", name="more")
    app.path.write_text(
        changed + '\n[[workspaces.mcp_servers]]\nname = "more"\n'
        f'command = "{more["command"]}"\nargs = {json.dumps(more["args"])}\n'
    )
    report = await app.reload()
    assert report.ok, report
    assert app.runtime.tools.mcp.servers["more"].connected
    assert (tmp_path / "notes" / "pid").read_text() == demo_pid, "demo was not restarted"
    anthropic_api.script = [tools(("more__add", {"a": 4, "b": 4})), text("8 it is")]
    telegram_api.push_message("4 + 4 on the new server", user=1001)
    await until(lambda: "8 it is" in telegram_api.chat(1001), wait_s=20)
    assert tool_results(anthropic_api)[-1]["content"]["summary_text"] == "8"
