"""Issue 17, DM pairing on Slack, through slack-bolt with signed events and `block_actions`:
a stranger's DM gets a code, the primary operator's DM gets the request with Block Kit
Approve and Deny, a stranger's press is refused, Alice's press makes the sender an operator
whose next message reaches the agent."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from adapters.server.app import App
from tests.adapters.slack_harness import ALICE, BOB, MALLORY, SlackSide, start_app
from tests.fakes.anthropic_api import FakeAnthropic, text
from tests.fakes.slack_api import FakeSlack
from tests.runtime.helpers import until
from tests.topology import Topology

CODE = re.compile(r"pairing code is ([A-Z2-9]{8})")
APPROVE = "switchboard_approve"


@pytest.fixture
async def app(
    topology: Topology, db_path: Path, anthropic_api: FakeAnthropic, slack_api: FakeSlack
) -> AsyncIterator[App]:
    """Pairing comes through the public port: on each topology (tests/topology.py)."""
    yield await start_app(
        db_path,
        anthropic_api,
        slack_api,
        acme_extra={"pairing": {"enabled": True}},
        topology=topology,
    )
    await topology.stop()  # while the fakes still answer


def ask(slack: FakeSlack) -> dict[str, Any] | None:
    """The pairing request, posted to Alice (the primary operator) in her DM."""
    found = [
        (channel, m)
        for channel, posted in slack.messages.items()
        for m in posted
        if str(m["text"]).startswith("\U0001f511")
    ]
    assert all(channel == "DALICE" for channel, _ in found), found  # Slack's DM id
    return found[0][1] if found else None


async def test_a_stranger_pairs_by_dm_and_alice_approves_with_a_button(
    app: App, slack_api: FakeSlack, anthropic_api: FakeAnthropic
) -> None:
    slack = SlackSide(app, slack_api)
    await slack.say("hello, may I use the agent?", user=MALLORY, channel="DMALLORY")
    await until(lambda: any(CODE.search(t) for t in slack_api.shown("DMALLORY")))
    await until(lambda: ask(slack_api) is not None)
    request = ask(slack_api)
    assert request is not None
    code = CODE.search(" ".join(slack_api.shown("DMALLORY")))
    assert code is not None and code.group(1) in str(request["text"])
    *_, actions = request["blocks"]
    assert [b["action_id"] for b in actions["elements"]] == [APPROVE, "switchboard_deny"]

    await slack.click(request, "DALICE", APPROVE, user=BOB)  # not an operator of acme
    before = len(slack_api.shown("DALICE"))
    await slack.say("/status", user=ALICE, channel="DALICE")  # handled after the press
    await until(lambda: len(slack_api.shown("DALICE")) > before)
    assert not any("now an operator" in t for t in slack_api.shown("DMALLORY"))
    await slack.click(request, "DALICE", APPROVE, user=ALICE)
    await until(lambda: any("now an operator of acme" in t for t in slack_api.shown("DMALLORY")))

    anthropic_api.script = [text("Welcome aboard.")]
    await slack.say("what can you do?", user=MALLORY, channel="DMALLORY")
    await until(lambda: "Welcome aboard." in slack_api.shown("DMALLORY"), wait_s=20)
    assert "may I use the agent" not in str(anthropic_api.requests)
