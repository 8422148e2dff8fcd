"""A burst of Telegram messages into one chat at its queue cap, on every topology (issue 38):
each message is answered or its sender told it was dropped, and the chat answers the next
message as usual: the conversation never wedges.

What is tried is the queue, not Telegram's pacing (`tests/adapters/fast_pacing.py`): the burst's
thirty replies into one chat do not take thirty seconds on each topology."""

from __future__ import annotations

from typing import Any

from adapters.server.app import App
from tests.adapters.telegram_harness import ALICE, replies
from tests.config_file import anthropic, workspace, write_config
from tests.fakes.anthropic_api import FakeAnthropic, text
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until
from tests.topology import Topology, drained

BURST = 30


def last_user_text(body: dict[str, Any]) -> str:
    return str(body["messages"][-1]["content"][-1]["text"])


async def start(topology: Topology, anthropic_api: FakeAnthropic, telegram: FakeTelegram) -> App:
    bot = {"bot_token": telegram.token, "api_base_url": telegram.base_url}
    path = write_config(
        topology.folder / "switchboard.toml",
        db=topology.db,
        provider=anthropic(anthropic_api.url),
        workspaces=[workspace("acme", [ALICE], telegram=bot, queue_mode="followup")],
        queue={"cap": 1, "drop_policy": "oldest"},
    )
    return await topology.start(path)


async def test_a_burst_at_the_queue_cap_never_wedges_the_chat(
    topology: Topology,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
) -> None:
    anthropic_api.responder = lambda body: text(f"answer to {last_user_text(body)}")
    app = await start(topology, anthropic_api, telegram_api)
    for n in range(BURST):
        telegram_api.push_message(f"m{n}", user=1001)

    def settled() -> bool:
        said = [r["text"] for r in replies(telegram_api, 1001)]
        return all(any(f"m{n}" in line for line in said) for n in range(BURST))

    await until(settled, 60)  # every message answered or its sender told it was dropped
    said = [r["text"] for r in replies(telegram_api, 1001)]
    dropped = [line for line in said if "was dropped" in line]
    answered = [line for line in said if line.startswith("answer to")]
    assert dropped, "the burst reached the cap"
    assert len(dropped) + len(answered) == BURST, said
    for n in range(BURST):
        told = [line for line in said if f"m{n}\u201d" in line or line.endswith(f" m{n}")]
        assert len(told) == 1, f"m{n} was both run and dropped, or neither: {told}"

    telegram_api.push_message("still there?", user=1001)
    said_now = lambda: [r["text"] for r in replies(telegram_api, 1001)]  # noqa: E731
    await until(lambda: "answer to still there?" in said_now(), 30)  # behind the burst's tail
    await drained(app)
    assert telegram_api.refused == [] and anthropic_api.refused == []
