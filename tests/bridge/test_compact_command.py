"""/compact and the context line of /status, as an operator meets them in chat."""

from __future__ import annotations

from pathlib import Path

from tests.bridge.fakes import RecordingTransport
from tests.bridge.harness import close_bridge, config_for, dm, open_bridge
from tests.fakes.anthropic_api import FakeAnthropic, text


async def test_compact_on_demand_between_turns_is_answered_when_done(
    anthropic_api: FakeAnthropic, db_path: Path
) -> None:
    transport = RecordingTransport()
    bridge = await open_bridge(config_for(db_path, anthropic_api), transport)
    anthropic_api.script = [
        text("The deploy key is in vault path ops/deploy."),
        text("done"),  # the memory flush before the summary: nothing more to keep
        text("Summary: the operator asked where the deploy key is: vault path ops/deploy."),
    ]
    try:
        await bridge.receive(dm("/status", update_id=1))
        await bridge.receive(dm("where is the deploy key?", update_id=2))
        await bridge.settle()
        await bridge.receive(dm("/compact", update_id=3))
        await bridge.settle()
        await bridge.receive(dm("/status", update_id=4))
        await bridge.settle()
        await bridge.receive(dm("/usage", update_id=5))
        await bridge.settle()
        said = [s.text for s in transport.sent]
        # the summary's call is counted, as the flush's is, though no turn made it
        assert "of which compaction: " in said[5] and "1 call" in said[5], said[5]
        assert "of which memory: " in said[5], said[5]
        assert "No session here yet" in said[0]
        assert said[2] == "Summarizing the conversation so far; I'll say when it's done."
        assert said[3].startswith("Summarized 1 earlier messages; the agent's context is now")
        assert "Context: about" in said[4] and "of 200,000 tokens" in said[4]
        summary_request = anthropic_api.requests[2]
        assert "where is the deploy key?" in str(summary_request["messages"])
        assert "operator alice via telegram" in str(summary_request["messages"]), "who said it"
    finally:
        await close_bridge(bridge)


async def test_compact_with_no_conversation_says_so(
    anthropic_api: FakeAnthropic, db_path: Path
) -> None:
    transport = RecordingTransport()
    bridge = await open_bridge(config_for(db_path, anthropic_api), transport)
    try:
        await bridge.receive(dm("/compact"))
        await bridge.settle()
        assert [s.text for s in transport.sent] == [
            "There is no conversation here yet, so there is nothing to compact."
        ]
    finally:
        await close_bridge(bridge)


async def test_compact_of_a_conversation_too_short_says_so(
    anthropic_api: FakeAnthropic, db_path: Path
) -> None:
    transport = RecordingTransport()
    bridge = await open_bridge(config_for(db_path, anthropic_api), transport)
    anthropic_api.script = [text("hello")]
    try:
        await bridge.receive(dm("/new", update_id=1))
        await bridge.receive(dm("/compact", update_id=2))
        await bridge.settle()
        assert [s.text for s in transport.sent][-2:] == [
            "Summarizing the conversation so far; I'll say when it's done.",
            "The conversation is still too short to summarize.",
        ]
    finally:
        await close_bridge(bridge)
