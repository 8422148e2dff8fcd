"""Issue 15, operator approval on Slack: an MCP server's tool named in `requires_approval`
waits for a press of Approve on the Block Kit request the bot posts (a signed
`block_actions` payload into slack-bolt); the server's other tools run at once; a stranger's
press is refused and the tool does not run."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from adapters.server.app import App
from bridge.events import BridgeEventType
from tests.adapters.mcp.test_mcp_tools import stdio_server
from tests.adapters.slack_harness import ALICE, MALLORY, SlackSide, start_app
from tests.fakes.anthropic_api import FakeAnthropic, text, tools
from tests.fakes.slack_api import FakeSlack
from tests.runtime.helpers import until, wait_for

DM = "DALICE"
APPROVE, DENY = "switchboard_approve", "switchboard_deny"


@pytest.fixture
async def app(
    db_path: Path, tmp_path: Path, anthropic_api: FakeAnthropic, slack_api: FakeSlack
) -> AsyncIterator[App]:
    server = {**stdio_server(tmp_path / "notes"), "requires_approval": ["add"]}
    app = await start_app(
        db_path,
        anthropic_api,
        slack_api,
        agent_tools=["demo.*"],
        acme_extra={"mcp_servers": [server]},
    )
    yield app
    await app.stop()


def request(slack: FakeSlack) -> dict[str, Any] | None:
    return next(
        (m for m in slack.messages.get(DM, []) if str(m["text"]).startswith("\U0001f510")), None
    )


def calls(tmp_path: Path) -> list[str]:
    path = tmp_path / "notes" / "calls"
    return path.read_text().splitlines() if path.exists() else []


async def test_only_the_named_tool_waits_and_a_strangers_press_is_refused(
    app: App, tmp_path: Path, slack_api: FakeSlack, anthropic_api: FakeAnthropic
) -> None:
    slack = SlackSide(app, slack_api)
    anthropic_api.script = [
        tools(("demo__weather", {"city": "Oslo"}), ("demo__add", {"a": 2, "b": 3})),
        text("Oslo is clear and 2 + 3 is 5"),
    ]
    await slack.say("weather and a sum", channel=DM)
    await until(lambda: request(slack_api) is not None, wait_s=20)
    await until(lambda: "weather Oslo" in " ".join(calls(tmp_path)), wait_s=20)
    posted = request(slack_api)
    assert posted is not None
    *sections, actions = posted["blocks"]
    assert "wants to run demo.add" in sections[0]["text"]["text"]
    assert [(b["action_id"], b["text"]["text"]) for b in actions["elements"]] == [
        (APPROVE, "Approve"),
        (DENY, "Deny"),
    ]
    assert not any(c.startswith("add") for c in calls(tmp_path)), "add waits for approval"

    answer = await slack.click(posted, DM, APPROVE, user=MALLORY)
    assert answer.status == 200
    refused = await wait_for(app.runtime, BridgeEventType.INBOUND_REFUSED)
    assert refused.data.sender_id == MALLORY
    assert not any(c.startswith("add") for c in calls(tmp_path))

    await slack.click(posted, DM, APPROVE, user=ALICE)
    await until(lambda: "Oslo is clear and 2 + 3 is 5" in slack_api.shown(DM), wait_s=20)
    assert [c for c in calls(tmp_path) if c.startswith("add")] == ["add 2 3"]
    results = [
        json.loads(b["content"])
        for m in anthropic_api.requests[-1]["messages"]
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]
    assert [r["status"] for r in results] == ["success", "success"]
    assert anthropic_api.refused == []
