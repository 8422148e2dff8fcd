"""The safe points of DESIGN §2 on every provider (Claude on Bedrock and Vertex, an
OpenAI-compatible server, one of nine-character ids; Anthropic's API: test_safe_points.py):
an operator's words sent mid-turn reach the model once, at the boundary they were admitted
at, after the tool results they followed, in a request the provider's fake takes."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from runtime.agents import AgentSpec
from runtime.engine import Runtime
from runtime.events import EventType
from runtime.messages import Provenance
from runtime.records import RunStatus
from runtime.tools.command import CommandToolSpec
from tests.runtime.helpers import all_events, blocking_tool, counting_tool, operator, until
from tests.runtime.helpers import wait_for as wait_event
from tests.runtime.providers.every_provider import KINDS, Fake, Round, fake_of, provider_of


@pytest.fixture(params=KINDS)
async def served(
    request: pytest.FixtureRequest, aiohttp_server: Any, monkeypatch: pytest.MonkeyPatch
) -> tuple[str, Fake, Callable[[Round], Any]]:
    fake, reply = fake_of(request.param, monkeypatch)
    server = await aiohttp_server(fake.app(), host="127.0.0.1")
    fake.url = str(server.make_url("")).rstrip("/")
    return request.param, fake, reply


async def runtime_on(
    served: tuple[str, Fake, Any], folder: Path, tools: list[CommandToolSpec], cleanup: list[Any]
) -> Runtime:
    """On SQLite alone: what differs here is the provider, not the store."""
    kind, fake, _ = served
    agent = AgentSpec("assistant", "You are a test agent.", tuple(t.name for t in tools))
    rt = await Runtime.open(
        folder / "sb.db",
        provider=provider_of(kind, fake.url),
        agents=[agent],
        command_tools=tools,
    )
    cleanup.append(rt)
    return rt


def said(words: str) -> Any:
    """An operator's message whose provenance does not repeat its words."""
    return operator(words, provenance=Provenance(sender="alice", surface="test"))


def after_the_call(body: dict[str, Any]) -> list[str]:
    """What a request sends after the model's last tool call: "result"s and "words"."""
    messages = body["messages"]
    if "tool_calls" in json.dumps(messages):  # Chat Completions: messages after the call
        last = max(i for i, m in enumerate(messages) if m.get("tool_calls"))
        return ["result" if m["role"] == "tool" else "words" for m in messages[last + 1 :]]
    return ["result" if b["type"] == "tool_result" else "words" for b in messages[-1]["content"]]


async def test_before_tool_execution(
    served: tuple[str, Fake, Any], tmp_path: Path, cleanup: list[Any]
) -> None:
    """A tool-only round; words admitted before its tool runs; the tool still runs once."""
    _, fake, reply = served
    counter, hold = tmp_path / "runs", asyncio.Event()
    fake.script = [reply(Round("", ("count",), hold=hold)), reply(Round("All done."))]
    rt = await runtime_on(served, tmp_path, [counting_tool("count", counter)], cleanup)
    sid = await rt.create_session("assistant")
    await rt.submit(sid, operator("check the thing"))
    await until(lambda: len(fake.requests) == 1)
    queued = await rt.submit(sid, said("also look at the logs"))
    assert queued.status == "waiting_for_safe_point"
    hold.set()
    await wait_event(rt, EventType.TURN_FINISHED)
    [admitted] = await all_events(rt, EventType.OPERATOR_INTERJECTION_ADMITTED)
    assert admitted.data.boundary == "before_tool_execution"
    assert counter.read_text().splitlines() == ["run"], "the tool still ran, exactly once"
    assert after_the_call(fake.requests[1]) == ["result", "words"]
    assert json.dumps(fake.requests[1]).count("also look at the logs") == 1
    [run] = await rt.store.runs(session_id=sid)
    assert run.status is RunStatus.COMPLETED and run.final_text == "All done."
    assert fake.refused == []


async def test_after_provider_round(
    served: tuple[str, Fake, Any], tmp_path: Path, cleanup: list[Any]
) -> None:
    _, fake, reply = served
    hold = asyncio.Event()
    fake.script = [reply(Round("Here is my answer.", hold=hold)), reply(Round("Updated."))]
    rt = await runtime_on(served, tmp_path, [], cleanup)
    sid = await rt.create_session("assistant")
    await rt.submit(sid, operator("question"))
    await until(lambda: len(fake.requests) == 1)
    await rt.submit(sid, said("actually, one more thing"))
    hold.set()
    finished = await wait_event(rt, EventType.TURN_FINISHED)
    assert finished.data.final_text == "Updated."
    [admitted] = await all_events(rt, EventType.OPERATOR_INTERJECTION_ADMITTED)
    assert admitted.data.boundary == "after_provider_round"
    roles = [m["role"] for m in fake.requests[1]["messages"] if m["role"] != "system"]
    assert roles == ["user", "assistant", "user"]
    assert "one more thing" in json.dumps(fake.requests[1]["messages"][-1])
    assert len(await rt.store.runs(session_id=sid)) == 1, "one turn, one more round"
    assert fake.refused == []


async def test_after_tool_results(
    served: tuple[str, Fake, Any], tmp_path: Path, cleanup: list[Any]
) -> None:
    _, fake, reply = served
    gate, marker = tmp_path / "gate", tmp_path / "marker"
    fake.script = [reply(Round("", ("wait",))), reply(Round("finished"))]
    rt = await runtime_on(served, tmp_path, [blocking_tool("wait", gate, marker)], cleanup)
    sid = await rt.create_session("assistant")
    await rt.submit(sid, operator("start"))
    await wait_event(rt, EventType.TOOL_STARTED)
    await rt.submit(sid, said("while the tool runs"))
    gate.touch()
    await wait_event(rt, EventType.TURN_FINISHED)
    [admitted] = await all_events(rt, EventType.OPERATOR_INTERJECTION_ADMITTED)
    assert admitted.data.boundary == "after_tool_results"
    sent = json.dumps(fake.requests[1]["messages"])
    assert after_the_call(fake.requests[1]) == ["result", "words"]
    assert sent.index("released") < sent.index("while the tool runs")
    assert sent.count("while the tool runs") == 1
    assert fake.refused == []
