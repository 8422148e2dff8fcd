"""End to end: a person at the console, the real App, the bridge, the runtime, the SDK,
and the fake Anthropic API."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp

from runtime.events import EventType
from runtime.messages import QueueStatus
from tests.adapters.console_harness import ConsoleHarness, make_config
from tests.adapters.test_metrics import parse, value
from tests.fakes.anthropic_api import FakeAnthropic, Reply, after_tools, text, tools
from tests.runtime.helpers import blocking_tool, until, wait_for


async def test_interjection_round_trip(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    hold = asyncio.Event()
    anthropic_api.script = [text("First thoughts.", hold=hold), text("Answer with your note.")]
    console = await ConsoleHarness(make_config(db_path, anthropic_api)).start()
    cleanup.append(console)
    console.type("what is up?")
    await until(lambda: len(anthropic_api.requests) == 1)
    console.type("and check the logs too")
    await wait_for(
        console.runtime,
        EventType.MESSAGE_QUEUED,
        lambda e: e.data.status == "waiting_for_safe_point",
    )
    hold.set()
    out = await console.expect("agent> Answer with your note.")
    assert "(your message reached the agent as it was about to answer)" in out
    assert "agent> First thoughts." not in out, "only the turn's final answer is the reply"
    last = anthropic_api.requests[-1]["messages"][-1]["content"][-1]["text"]
    assert last.endswith("(from you, via console, message line 2)\nand check the logs too")
    async with (
        aiohttp.ClientSession() as http,
        http.get(f"http://127.0.0.1:{console.app.port}/metrics") as response,
    ):
        metrics = parse(await response.text())
    assert value(metrics, "switchboard_interjections_total", boundary="after_provider_round") == 1


async def test_stop_during_a_tool(
    anthropic_api: FakeAnthropic, db_path: Path, tmp_path: Path, cleanup: list[object]
) -> None:
    gate, marker = tmp_path / "never", tmp_path / "pids"
    tool = blocking_tool("wait", gate, marker)
    anthropic_api.script = [tools(("wait", {}))]
    config = make_config(db_path, anthropic_api, agent_tools=["wait"], tools=[tool])
    console = await ConsoleHarness(config).start()
    cleanup.append(console)
    console.type("run the long job")
    await wait_for(console.runtime, EventType.TOOL_STARTED)
    console.type("/stop")
    await console.expect("switchboard> Stopped.")
    finished = await wait_for(console.runtime, EventType.TOOL_FINISHED)
    assert finished.data.status == "cancelled"
    console.type("/stop")
    await console.expect("switchboard> Nothing is running, so there is nothing to stop.")


async def test_private_childs_notification_reaches_the_parents_conversation(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    child_steps = [
        tools(("notify_operator", {"message": "Child needs a human\nmore"})),
        text("child done"),
    ]

    def respond(body: dict[str, object]) -> Reply:
        if "private child agent" in str(body.get("system", "")):
            return child_steps.pop(0)
        return text("spawned" if after_tools(body) else "parent: child finished")

    anthropic_api.script = [tools(("spawn_agent", {"task": "look around"}))]
    anthropic_api.responder = respond
    console = await ConsoleHarness(make_config(db_path, anthropic_api)).start()
    cleanup.append(console)
    console.type("delegate")
    await console.expect("notice> \U0001f514 assistant/child-1:")
    out = await console.expect("Child needs a human")
    out = await console.expect("agent> parent: child finished")
    assert "agent> child done" not in out, "a child's answer goes to its parent, not to chat"


async def test_unknown_command_and_bad_arguments_get_clear_replies(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    console = await ConsoleHarness(make_config(db_path, anthropic_api)).start()
    cleanup.append(console)
    console.type("/queue sideways")
    await console.expect("Usage: /queue steer|followup|collect|interrupt (now: steer).")
    console.type("/frobnicate")
    await console.expect("I don't know the command /frobnicate. Send /help for the list.")
    console.type("   ")
    await console.expect("Your message was empty")
    console.type("/queue followup")
    await console.expect("Queue mode for this conversation is now followup.")
    console.type("/status")
    await console.expect(
        "Queue: empty (mode followup: each message gets a turn of its own, after the one running)."
    )
    assert anthropic_api.requests == [], "no command reached the model"
    messages = await console.runtime.store.messages()
    assert messages == [], "no command or empty line became a runtime message"


async def test_new_starts_a_fresh_session(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    anthropic_api.script = [text("one"), text("done"), text("two")]  # /new's flush: "done"
    console = await ConsoleHarness(make_config(db_path, anthropic_api)).start()
    cleanup.append(console)
    console.type("remember 42")
    await console.expect("agent> one")
    console.type("/new")
    await console.expect("Started a fresh session")
    console.type("what did I say?")
    await console.expect("agent> two")
    assert len(anthropic_api.requests[-1]["messages"]) == 1, "the old conversation is gone"
    statuses = {m.status for m in await console.runtime.store.messages()}
    assert statuses == {QueueStatus.PROCESSED}
