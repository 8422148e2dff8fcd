"""Issue 41's 'done when', through `switchboard run` on every topology: the first provider
(Anthropic's API) fails mid-turn after a tool call, the second (an OpenAI-compatible server)
finishes the turn from the same transcript, with the tool not run again and one reply; the
session stays there, and returns to the first only once it answers a probe."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from runtime.store.usage import UsageFilter
from tests.adapters.telegram_harness import replies, start_app
from tests.fakes import openai_api
from tests.fakes.anthropic_api import FakeAnthropic, Reply, error, text, tools
from tests.fakes.openai_api import FakeOpenAI
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import counting_tool, until
from tests.topology import Topology

ALICE = 1001
BACKUP_MODEL = "gpt-4.1-mini"


class Primary:
    """The first provider: a tool call, then 529 for the call after it, until it is `up`
    again; a probe (a request for one token) answers only then."""

    def __init__(self) -> None:
        self.up = True
        self.calls: list[str] = []  # "probe" or "turn", in order

    def __call__(self, body: dict[str, Any]) -> Reply:
        probe = body["max_tokens"] == 1
        self.calls.append("probe" if probe else "turn")
        if probe:
            return text("pong") if self.up else error(529, "overloaded_error", "Overloaded")
        if self.calls.count("turn") == 1:
            return tools(("count", {}))
        if self.calls.count("turn") == 2:
            self.up = False
            return error(529, "overloaded_error", "Overloaded")
        return text("Back on the first.")


async def test_a_turn_falls_back_mid_way_and_returns_after_a_probe(
    topology: Topology,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    aiohttp_server: Any,
    tmp_path: Path,
) -> None:
    backup = FakeOpenAI()
    server = await aiohttp_server(backup.app(), host="127.0.0.1")
    backup.url = str(server.make_url("/v1"))
    backup.responder = lambda body: openai_api.text("From the backup.")
    primary = Primary()
    anthropic_api.responder = primary
    counter = tmp_path / "count.log"
    prices = {
        "claude-test-model": {"input": 3.0, "output": 15.0},
        BACKUP_MODEL: {"input": 0.4, "output": 1.6},
    }
    await start_app(
        topology.folder / "unused.db",
        anthropic_api,
        telegram_api,
        topology=topology,
        agent_tools=("notify_operator", "count"),
        tools=[counting_tool("count", counter)],
        provider={"fallback": ["backup"], "cooldown_s": 0.5, "prices": prices},
        providers={
            "backup": {
                "kind": "openai",
                "base_url": backup.url,
                "api_key": "test-key",
                "model": BACKUP_MODEL,
            }
        },
    )

    def said() -> list[str]:
        return [m["text"] for m in replies(telegram_api, ALICE)]

    telegram_api.push_message("How many runs so far?", user=ALICE)
    await until(lambda: len(said()) == 1, 30)
    assert said() == ["From the backup."], "one reply, the second provider's"
    assert counter.read_text().count("run") == 1, "the tool ran once"
    [finished] = backup.requests
    assert [m["role"] for m in finished["messages"]][-2:] == ["assistant", "tool"]
    assert backup.refused == [] and anthropic_api.refused == []
    usage = topology.active.runtime.store.usage
    by_provider = dict(await usage.grouped(UsageFilter(since=0), "provider"))
    assert (by_provider["default"].calls, by_provider["backup"].calls) == (1, 1)
    assert by_provider["backup"].cost_usd > 0, "the backup's call priced at its model's price"

    telegram_api.push_message("Still there?", user=ALICE)
    await until(lambda: len(said()) == 2, 30)
    assert said()[1] == "From the backup.", "the session stays on its fallback"

    primary.up = True
    for n in range(40):  # until the first provider's rest is over and a probe finds it up
        telegram_api.push_message(f"And now ({n})?", user=ALICE)
        await until(lambda n=n: len(said()) == 3 + n, 30)
        if said()[-1] == "Back on the first.":
            break
        await asyncio.sleep(0.25)
    assert said()[-1] == "Back on the first."
    last_probe = len(primary.calls) - 1 - primary.calls[::-1].index("probe")
    assert primary.calls[last_probe + 1 :] == ["turn"], "it returned after a probe answered"
    assert counter.read_text().count("run") == 1
