"""Slack pacing end to end: slack_sdk against a fake Web API that enforces Slack's limits
(a post a second in a channel, chat.update's tier 3) and tells the 429s it injected from those
our pacing caused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.adapters.slack_harness import (
    OPS,
    SlackSide,
    start_app,
)
from tests.fakes.anthropic_api import FakeAnthropic, text, tools
from tests.fakes.slack_api import FakeSlack
from tests.runtime.helpers import until

pytestmark = pytest.mark.real_pacing  # the pacing itself is tried here


async def test_eight_busy_threads_keep_progress_within_slacks_limits(
    db_path: Path, anthropic_api: FakeAnthropic, slack_api: FakeSlack
) -> None:
    """Eight turns at once in one channel, each working for seconds: their progress edits
    would be far over chat.update's tier 3 (50 a minute) and their posts over the channel's
    one a second. Progress is dropped and coalesced to fit; every reply arrives; no 429."""

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        rounds = sum(b.get("type") == "tool_result" for m in body["messages"] for b in m["content"])
        if rounds < 8:
            return tools(("sleep", {"seconds": 0.8}))
        prompt = body["messages"][0]["content"][0]["text"]
        return text(f"done: {prompt}")

    anthropic_api.responder = respond
    app = await start_app(db_path, anthropic_api, slack_api, agent_tools=["sleep"])
    slack = SlackSide(app, slack_api)
    try:
        tops = [await slack.say(f"job {i}", channel=OPS) for i in range(8)]
        await until(lambda: len(slack_api.posts(OPS)) == 8, 60)
        await app.bridge.settle()
        await until(lambda: not [m for m in slack_api.messages[OPS] if "blocks" in m], 30)
    finally:
        await app.stop()
    answers = {m["thread_ts"]: m["text"] for m in slack_api.posts(OPS)}
    assert answers == {top: f"done: job {i}" for i, top in enumerate(tops)}
    assert slack_api.method_calls("chat.update"), "progress was shown and updated"
    assert slack_api.self_caused == []
    assert slack_api.refused == []
