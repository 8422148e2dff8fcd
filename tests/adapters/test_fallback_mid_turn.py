"""Fallback mid-turn through `switchboard run` (issue 41): the first provider (Anthropic's
API, `[provider]`) calls a tool, then fails the turn's next call with a 429 asking for a
rest, a 529, a 402 or an attempt that outlasts `attempt_timeout_s`; the second (an
OpenAI-compatible server, `fallback = ["backup"]`) finishes the turn from the same
transcript: one reply, the tool run once. An interjection sent while the turn falls back
reaches the model once; a `/stop` while the fallback answers ends the turn there, and the
conversation goes on from a transcript both APIs take. And a turn moves mid-way between
other kinds (OpenAI-compatible to Bedrock, Bedrock to Vertex, Vertex to nine-character ids),
the tool call made in one API's ids answered in the other's."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from adapters.server.app import App
from bridge import texts
from runtime.events import EventType
from tests.adapters.provider_fakes import Fake, Served, serve
from tests.adapters.telegram_harness import replies, start_app
from tests.fakes import openai_api
from tests.fakes.anthropic_api import FakeAnthropic, Reply, error, text, tools
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import counting_tool, until, wait_for
from tests.topology import Topology

ALICE = 1001
ATTEMPT_S = 1.0  # the first provider's per-attempt limit, where a test times it out
PRICES = {
    "claude-test-model": {"input": 3.0, "output": 15.0},
    "gpt-4.1-mini": {"input": 0.4, "output": 1.6},
}
pytestmark = [
    pytest.mark.parametrize("topology", ["process"], indirect=True),
]


class Primary:
    """The first provider: a tool call, then `failure` for every call of the turn after it;
    a probe (one token) answers "pong", a later turn "From the first."."""

    def __init__(self, failure: Reply) -> None:
        self.failure = failure
        self.turns = 0

    def __call__(self, body: dict[str, Any]) -> Reply:
        if body["max_tokens"] == 1:
            return text("pong")
        self.turns += 1
        if self.turns == 1:
            return tools(("count", {}))
        return self.failure if self.turns == 2 else text("From the first.")


def failing(kind: str, late: asyncio.Event) -> Reply:
    match kind:
        case "429":
            return error(
                429, "rate_limit_error", "Number of requests exceeded", **{"retry-after": "30"}
            )
        case "529":
            return error(529, "overloaded_error", "Overloaded")
        case "402":
            return error(402, "billing_error", "Your credit balance is too low")
    return text("Too late to count.", hold=late)  # streams its first words, then nothing


async def started(
    topology: Topology,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    backup: Served,
    counter: Path,
    attempt_s: float | None = None,
) -> App:
    """`attempt_s`: the first provider's per-attempt limit (None: the config's default)."""
    return await start_app(
        topology.folder / "unused.db",
        anthropic_api,
        telegram_api,
        topology=topology,
        agent_tools=("notify_operator", "count"),
        tools=[counting_tool("count", counter)],
        provider={
            "fallback": ["backup"],
            "cooldown_s": 0.2,
            "attempt_timeout_s": attempt_s,
            "prices": PRICES,
        },
        providers={"backup": backup.config},
    )


def said(telegram: FakeTelegram) -> list[str]:
    return [m["text"] for m in replies(telegram, ALICE)]


def assert_valid(anthropic_api: FakeAnthropic, backup: Fake) -> None:
    assert anthropic_api.refused == [], anthropic_api.refused
    assert backup.refused == [], backup.refused


@pytest.fixture
async def backup(aiohttp_server: Any, monkeypatch: pytest.MonkeyPatch) -> Served:
    return await serve("openai", aiohttp_server, monkeypatch)


@pytest.mark.parametrize("failure", ["429", "529", "402", "timeout"])
async def test_the_second_provider_finishes_the_turn_with_one_reply(
    failure: str,
    topology: Topology,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    backup: Served,
    tmp_path: Path,
) -> None:
    late = asyncio.Event()
    anthropic_api.responder = primary = Primary(failing(failure, late))
    backup.fake.responder = lambda body: openai_api.text("From the backup.")
    counter = tmp_path / "count.log"
    attempt_s = ATTEMPT_S if failure == "timeout" else None
    await started(topology, anthropic_api, telegram_api, backup, counter, attempt_s)
    try:
        telegram_api.push_message("How many runs so far?", user=ALICE)
        await until(lambda: len(said(telegram_api)) == 1, 15)
        await asyncio.sleep(0.3)  # time for a doubled reply to show
        assert said(telegram_api) == ["From the backup."], "one reply, the second provider's"
        assert counter.read_text().count("run") == 1, "the tool ran once"
        assert primary.turns == 2, "the first provider was not asked again within the turn"
        [finished] = backup.fake.requests
        assert [m["role"] for m in finished["messages"]][-2:] == ["assistant", "tool"]
        assert "Too late" not in json.dumps(finished["messages"]), "no failed attempt's words"
        assert_valid(anthropic_api, backup.fake)
        assert telegram_api.live_drafts() == {}, "no failed attempt's words left in a draft"
    finally:
        late.set()


async def test_an_interjection_while_the_turn_falls_back_reaches_the_model_once(
    topology: Topology,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    backup: Served,
    tmp_path: Path,
) -> None:
    late = asyncio.Event()
    anthropic_api.responder = Primary(failing("timeout", late))
    backup.fake.script = [openai_api.text("Counted once."), openai_api.text("Noted: blue.")]
    app = await started(
        topology, anthropic_api, telegram_api, backup, tmp_path / "count.log", ATTEMPT_S
    )
    try:
        telegram_api.push_message("Count, please.", user=ALICE)
        await until(lambda: len(anthropic_api.requests) == 2)  # the attempt that will time out
        telegram_api.push_message("use the blue cluster", user=ALICE)
        await wait_for(
            app.runtime,
            EventType.MESSAGE_QUEUED,
            lambda e: e.data.status == "waiting_for_safe_point",
        )
        await until(lambda: "Noted: blue." in said(telegram_api), 15)
        await asyncio.sleep(0.3)
        assert said(telegram_api) == ["Noted: blue."], "one answer: the turn's last round's"
        assert len(backup.fake.requests) == 2
        last = json.dumps(backup.fake.requests[-1]["messages"])
        assert last.count("use the blue cluster") == 1, "the interjection reached it once"
        assert "use the blue cluster" not in json.dumps(backup.fake.requests[0]["messages"])
        assert len(anthropic_api.requests) == 2, "the first provider was left for the turn"
        assert_valid(anthropic_api, backup.fake)
    finally:
        late.set()


@pytest.mark.parametrize("during", ["first", "backup"])
async def test_a_stop_mid_fallback_leaves_the_session_usable(
    during: str,
    topology: Topology,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    backup: Served,
    tmp_path: Path,
) -> None:
    """Stopped while the first provider's failing attempt is still out (it would time out
    and fall back), or while the fallback answers: the turn ends there, nothing is asked
    after the stop, and the next message is answered from a valid transcript."""
    held = asyncio.Event()
    anthropic_api.responder = Primary(failing("timeout" if during == "first" else "529", held))
    backup.fake.script = [openai_api.Reply(text="Never finished.", hold=held)]
    backup.fake.responder = lambda body: openai_api.text("From the backup.")
    attempt_s = 5.0 if during == "first" else None  # the stop comes well before it ends
    await started(topology, anthropic_api, telegram_api, backup, tmp_path / "c", attempt_s)
    try:
        telegram_api.push_message("Count, please.", user=ALICE)
        out = anthropic_api.requests if during == "first" else backup.fake.requests
        await until(lambda: len(out) == (2 if during == "first" else 1), 15)
        telegram_api.push_message("/stop", user=ALICE)
        await until(lambda: texts.STOPPED in said(telegram_api))
        asked = (len(anthropic_api.requests), len(backup.fake.requests))
        await asyncio.sleep(0.3)  # past the cooldown: a probe may bring the first back
        assert (len(anthropic_api.requests), len(backup.fake.requests)) == asked
        assert asked == ((2, 0) if during == "first" else (2, 1)), "nothing asked after the stop"
        held.set()
        telegram_api.push_message("Are you there?", user=ALICE)
        await until(lambda: len(said(telegram_api)) == 2, 15)
        answer = said(telegram_api)[1]
        assert answer in ("From the backup.", "From the first.")
        last = (anthropic_api if answer == "From the first." else backup.fake).requests[-1]
        assert "Are you there?" in json.dumps(last["messages"])
        assert "Never finished." not in json.dumps(last["messages"]), "the stopped words"
        assert "Too late" not in json.dumps(last["messages"]), "the stopped words"
        assert_valid(anthropic_api, backup.fake)
    finally:
        held.set()


@pytest.mark.parametrize(
    ("first_kind", "second_kind"),
    [("openai", "bedrock"), ("bedrock", "vertex"), ("vertex", "openai-nine")],
)
async def test_a_turn_moves_between_any_two_kinds_of_provider(
    first_kind: str,
    second_kind: str,
    topology: Topology,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    aiohttp_server: Any,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """The tool call made on the first, in its ids, is answered on the second in its own:
    one reply, the tool run once, every request one its API takes."""
    first = await serve(first_kind, aiohttp_server, monkeypatch)
    second = await serve(second_kind, aiohttp_server, monkeypatch)
    turns: list[int] = []

    def primary(body: dict[str, Any]) -> Any:
        if body.get("max_tokens") == 1 or body.get("max_completion_tokens") == 1:
            return first.text("pong")
        turns.append(1)
        return first.call("count") if len(turns) == 1 else first.overloaded()

    first.fake.responder = primary
    second.fake.responder = lambda body: second.text("From the second.")
    counter = tmp_path / "count.log"
    await start_app(
        topology.folder / "unused.db",
        anthropic_api,  # unused: the first provider is `first`'s
        telegram_api,
        topology=topology,
        agent_tools=("notify_operator", "count"),
        tools=[counting_tool("count", counter)],
        provider={**first.config, "fallback": ["second"], "allow_costlier": True},
        providers={"second": second.config},
    )
    telegram_api.push_message("How many runs so far?", user=ALICE)
    await until(lambda: len(said(telegram_api)) == 1, 15)
    await asyncio.sleep(0.3)  # time for a doubled reply to show
    assert said(telegram_api) == ["From the second."]
    assert counter.read_text().count("run") == 1, "the tool ran once"
    assert len(turns) == 2 and len(second.fake.requests) == 1
    assert "counted" in second.sent(0), "the first's tool result, answered on the second"
    assert first.fake.refused == [] and second.fake.refused == []
