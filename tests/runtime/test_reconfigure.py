"""Replacing the configured agents and command tools while the runtime runs (a config reload):
a running turn finishes with the agent and tools it started with; the next turn has the new
ones; queued work of an agent no longer configured waits for it, and is not lost."""

from __future__ import annotations

import asyncio
from pathlib import Path

from runtime.agents import AgentSpec
from runtime.events import EventType
from runtime.messages import QueueStatus
from runtime.payloads import TurnFinished
from tests.fakes.anthropic_api import FakeAnthropic, text, tools
from tests.runtime.helpers import counting_tool, open_runtime, operator, until, wait_for

NEW = AgentSpec("assistant", "You are the new agent.", ("notify_operator",))


async def test_a_running_turn_keeps_what_it_started_with(
    db_path: Path, anthropic_api: FakeAnthropic, tmp_path: Path
) -> None:
    counter = tmp_path / "runs"
    rt = await open_runtime(db_path, anthropic_api, command_tools=[counting_tool("probe", counter)])
    gate = asyncio.Event()
    anthropic_api.script = [tools(("probe", {}), hold=gate), text("first done"), text("second")]
    try:
        sid = await rt.create_session("assistant")
        await rt.submit(sid, operator("use the probe"))
        await until(lambda: len(anthropic_api.requests) == 1)

        rt.reconfigure([NEW], [])  # the prompt changes and the probe is gone
        gate.set()
        finished = await wait_for(rt, EventType.TURN_FINISHED)
        assert isinstance(finished.data, TurnFinished)
        assert finished.data.final_text == "first done"
        assert counter.read_text() == "run\n", "the tool it was offered still ran"
        second_round = anthropic_api.requests[1]
        assert second_round["system"][0]["text"].startswith("You are a test agent.")
        assert "probe" in [t["name"] for t in second_round["tools"]]

        await rt.submit(sid, operator("again"))
        await rt.wait_idle()
        next_turn = anthropic_api.requests[2]
        assert next_turn["system"][0]["text"].startswith("You are the new agent.")
        assert [t["name"] for t in next_turn["tools"]] == ["notify_operator"]
    finally:
        await rt.close()


async def test_queued_work_of_a_removed_agent_waits_until_it_is_back(
    db_path: Path, anthropic_api: FakeAnthropic
) -> None:
    rt = await open_runtime(db_path, anthropic_api)
    try:
        sid = await rt.create_session("assistant")
        kept = rt.agents["assistant"]
        rt.reconfigure([], [])
        await rt.submit(sid, operator("while you were away"))
        await rt.wait_idle()
        [waiting] = await rt.store.messages()
        assert waiting.status is QueueStatus.QUEUED and anthropic_api.requests == []

        rt.reconfigure([kept], [])
        await rt.wait_idle()
        [done] = await rt.store.messages()
        assert done.status is QueueStatus.PROCESSED and len(anthropic_api.requests) == 1
    finally:
        await rt.close()
