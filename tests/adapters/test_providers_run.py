"""Issue 41's 'done when': the same conversation through `switchboard run` on each provider
as the default `[provider]` (Anthropic's API, Claude on Bedrock and on Vertex, an
OpenAI-compatible server, one taking nine-character ids), each a loopback fake that checks
every request as its API does: a tool call and its result over two rounds, an interjection
sent while the tool runs reaching the model at the next safe point, a `/stop` of a running
turn and the conversation going on after it, and a long answer streamed as drafts in a
Telegram DM that lands once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bridge import texts
from runtime.events import EventType
from tests.adapters.provider_fakes import KINDS, Served, serve
from tests.adapters.telegram_harness import replies, start_app
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import blocking_tool, until, wait_for
from tests.topology import Topology

ALICE = 1001
STATUS = "\u23f3 "  # how a turn's status line begins (`adapters/telegram/progress.py`)
LINES = [f"{i:05d} " + "lorem ipsum dolor sit amet " * 3 for i in range(80)]


@pytest.fixture(params=KINDS)
async def provider(
    request: pytest.FixtureRequest, aiohttp_server: Any, monkeypatch: pytest.MonkeyPatch
) -> Served:
    return await serve(request.param, aiohttp_server, monkeypatch)


@pytest.mark.parametrize("topology", ["process"], indirect=True)
async def test_one_conversation_on_each_provider(
    topology: Topology,
    provider: Served,
    anthropic_api: Any,
    telegram_api: FakeTelegram,
    tmp_path: Path,
) -> None:
    gate, stuck, marker = tmp_path / "gate", tmp_path / "never", tmp_path / "pids"
    first, second = "\n".join(LINES[:40]) + "\n", "\n".join(LINES[40:])
    long_answer, release = provider.held(first, second)
    provider.fake.script = [
        provider.call("wait"),
        provider.text("Done, on the blue cluster."),
        provider.call("stuck"),
        provider.text("Still here."),
        long_answer,
    ]
    app = await start_app(
        topology.folder / "unused.db",
        anthropic_api,  # unused: the default provider is `provider`'s
        telegram_api,
        topology=topology,
        agent_tools=("notify_operator", "wait", "stuck"),
        tools=[blocking_tool("wait", gate, marker), blocking_tool("stuck", stuck, marker)],
        provider=provider.config,
    )

    def said() -> list[str]:
        return [m["text"] for m in replies(telegram_api, ALICE)]

    # A tool call, an interjection while it runs, its result: two rounds, one answer.
    telegram_api.push_message("deploy", user=ALICE)
    await wait_for(app.runtime, EventType.TOOL_STARTED, wait_s=30)
    telegram_api.push_message("use the blue cluster", user=ALICE)
    await wait_for(
        app.runtime,
        EventType.MESSAGE_QUEUED,
        lambda e: e.data.status == "waiting_for_safe_point",
        wait_s=30,
    )
    gate.touch()
    await until(lambda: "Done, on the blue cluster." in said(), 30)
    admitted = await wait_for(app.runtime, EventType.OPERATOR_INTERJECTION_ADMITTED, wait_s=30)
    assert admitted.data.boundary == "after_tool_results"
    assert len(provider.fake.requests) == 2
    shown = provider.sent(1)
    assert "released" in shown, "the tool's result reached the model"
    assert shown.count("use the blue cluster") == 1, "the interjection, once, at the safe point"
    assert shown.index("released") < shown.index("use the blue cluster")

    # A stop while a tool runs; the conversation goes on from a transcript the API takes.
    telegram_api.push_message("run it again", user=ALICE)
    await until(lambda: marker.read_text().count("\n") == 2, 30)
    telegram_api.push_message("/stop", user=ALICE)
    await until(lambda: texts.STOPPED in said(), 30)
    telegram_api.push_message("Are you there?", user=ALICE)
    await until(lambda: "Still here." in said(), 30)
    assert len(provider.fake.requests) == 4
    assert "Are you there?" in provider.sent(3)

    # A long answer streams as drafts (its newest part) and lands once, whole. (The turn's
    # status line, with its Stop button, may show meanwhile: on a loaded machine its first
    # second passes before the first words.)
    def answer_parts() -> list[str]:
        return [t for t in telegram_api.chat(ALICE) if not t.startswith(STATUS)]

    before = len(answer_parts())
    telegram_api.push_message("long please", user=ALICE)
    await until(
        lambda: any("00039" in d["text"] for d in telegram_api.sent("sendMessageDraft")), 30
    )
    assert len(answer_parts()) == before, "nothing of the answer lands before it is done"
    release.set()
    await until(lambda: "00079" in "".join(telegram_api.chat(ALICE)), 20)
    await until(lambda: len(answer_parts()) == before + 2, 30)
    landed = answer_parts()[before:]
    assert [line.rstrip() for line in "\n".join(landed).split("\n")] == [
        line.rstrip() for line in LINES
    ]
    assert all(len(t) <= 4096 for t in landed)

    assert provider.fake.refused == [], provider.fake.refused
    assert len(provider.fake.requests) == 5, "no request but the conversation's"
    assert telegram_api.refused == [] and telegram_api.live_drafts() == {}
