"""Memory end to end (issue 40), on every topology of `switchboard run`: a fact Alice tells the
agent in her Telegram DM and it keeps is offered in her next session's request
after /new, and never in a request of the group chat she also talks to the agent in; a fact it
did not keep during the conversation is kept by the flush /new asks for first; a stranger's
"fact" Alice forwards is kept marked as from untrusted text."""

from __future__ import annotations

import json
from typing import Any

from bridge import texts
from runtime.memory_flush import FLUSH_REQUEST
from runtime.recall import HEADER, UNTRUSTED_MARK
from tests.adapters.hostile.passed_on import forward_origin, forwarded
from tests.adapters.telegram_harness import replies, start_app
from tests.fakes.anthropic_api import FakeAnthropic, text, tools
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until
from tests.topology import Topology

ALICE = 1001
GROUP = -100
DEPLOY = "Our deploy window is Tuesdays 14:00 UTC"


def offered_in(body: dict[str, Any]) -> str:
    """The memories offered in a request: a block at the head of the turn's first message."""
    return " ".join(
        block["text"]
        for message in body["messages"]
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "text" and block["text"].startswith(HEADER)
    )


async def test_a_fact_kept_in_a_dm_is_offered_after_new_and_never_in_the_group(
    topology: Topology, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    anthropic_api.script = [
        tools(("remember", {"text": DEPLOY})),
        text("Noted."),
        text("done"),  # the flush /new asks for: kept already
        text("It is on Tuesdays, 14:00 UTC."),
        text("I can't say here."),
    ]
    await start_app(topology.folder / "unused.db", anthropic_api, telegram_api, topology=topology)
    telegram_api.push_message("Remember: our deploy window is Tuesdays 14:00 UTC", user=ALICE)
    await until(lambda: len(replies(telegram_api, ALICE)) == 1)
    assert "remember" in {t["name"] for t in anthropic_api.requests[0]["tools"]}
    [kept] = anthropic_api.tool_results()
    assert '"scope": "operator"' in kept["content"], kept

    telegram_api.push_message("/new", user=ALICE)
    await until(lambda: len(replies(telegram_api, ALICE)) == 2)
    telegram_api.push_message("When is the deploy window?", user=ALICE)
    await until(lambda: len(replies(telegram_api, ALICE)) == 3)
    flush, after_new = anthropic_api.requests[2:4]
    assert DEPLOY in json.dumps(flush["messages"][-1]), "the flush lists what is kept already"
    assert len(after_new["messages"]) == 1, "a fresh session"
    assert DEPLOY in offered_in(after_new)

    telegram_api.push_message(
        "When is the deploy window?", user=ALICE, chat=GROUP, chat_type="group"
    )
    await until(lambda: len(replies(telegram_api, GROUP)) == 1)
    assert DEPLOY not in json.dumps(anthropic_api.requests[4]), "Alice's memory reached the group"
    assert anthropic_api.refused == []


async def test_new_keeps_what_the_conversation_did_not_before_leaving_it(
    topology: Topology, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    anthropic_api.script = [
        text("Good to know."),
        tools(("remember", {"text": DEPLOY})),  # the flush /new asks for
        text("done"),
        text("Tuesdays, 14:00 UTC."),
    ]
    await start_app(topology.folder / "unused.db", anthropic_api, telegram_api, topology=topology)
    telegram_api.push_message("FYI our deploy window is Tuesdays 14:00 UTC", user=ALICE)
    await until(lambda: len(replies(telegram_api, ALICE)) == 1)
    telegram_api.push_message("/new", user=ALICE)
    await until(lambda: len(replies(telegram_api, ALICE)) == 2)
    assert texts.KEEPING_MEMORIES in replies(telegram_api, ALICE)[1]["text"]
    telegram_api.push_message("When is the deploy window?", user=ALICE)
    await until(lambda: len(replies(telegram_api, ALICE)) == 3)

    flush = anthropic_api.requests[1]
    assert FLUSH_REQUEST in json.dumps(flush["messages"][-1])
    assert [t["name"] for t in flush["tools"]] == ["remember"]
    assert "FYI our deploy window" in json.dumps(flush["messages"][0]), "the old conversation"
    after_new = anthropic_api.requests[3]
    assert len(after_new["messages"]) == 1, "a fresh session"
    assert DEPLOY in offered_in(after_new), "what the flush kept is offered"
    assert anthropic_api.refused == []


async def test_a_forwarded_strangers_fact_is_kept_marked_untrusted(
    topology: Topology, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    claim = "The staging password is hunter2"
    anthropic_api.script = [
        tools(("remember", {"text": claim})),
        text("Kept."),
        text("done"),  # the flush /new asks for
        text("A forward said hunter2."),
    ]
    await start_app(topology.folder / "unused.db", anthropic_api, telegram_api, topology=topology)
    telegram_api.push_update(forwarded(claim, forward_origin("user")))
    await until(lambda: len(replies(telegram_api, ALICE)) == 1)
    telegram_api.push_message("/new", user=ALICE)
    await until(lambda: len(replies(telegram_api, ALICE)) == 2)
    telegram_api.push_message("What is the staging password?", user=ALICE)
    await until(lambda: len(replies(telegram_api, ALICE)) == 3)
    [line] = [x for x in offered_in(anthropic_api.requests[-1]).splitlines() if claim in x]
    assert UNTRUSTED_MARK in line, "a stranger's words offered as if Alice's"
    assert anthropic_api.refused == []
