"""Which agent answers where, when it answers in a channel, the slash command and suggested
prompts, on Slack: slack-bolt receiving signed requests as Slack sends them, its client against
the fake Web API, the real App, the fake Anthropic API (which agent answered is told by the
system prompt the model was sent)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from adapters.server.app import App
from bridge.events import BridgeEventType
from runtime.store.store import Store
from tests.adapters.slack_harness import ALICE, MALLORY, OPS, SlackSide, start_app
from tests.fakes.anthropic_api import FakeAnthropic, text
from tests.fakes.slack_api import FakeSlack
from tests.runtime.helpers import until
from tests.topology import drained

BOT = "<@UBOTT1>"
AGENTS = [
    {"id": "assistant", "system_prompt": "You are the default agent."},
    {"id": "ops", "system_prompt": "You are the ops agent."},
    {"id": "private", "system_prompt": "You are the private agent."},
]


def system_of(request: dict[str, Any]) -> str:
    return " ".join(block["text"] for block in request.get("system", []))


async def ignored(app: App) -> list[str]:
    """Whose messages were ignored, by sender (conversations are handled side by side)."""
    await drained(app)
    store: Store = app.runtime.store
    return sorted(
        e.data.model_dump()["sender_id"]
        for e in await store.events_after(0)
        if e.type == BridgeEventType.INBOUND_IGNORED
    )


async def test_the_channel_and_the_dms_are_answered_by_their_bound_agents(
    db_path: Path, anthropic_api: FakeAnthropic, slack_api: FakeSlack
) -> None:
    bindings = [
        {"agent": "ops", "slack_channel": OPS},
        {"agent": "private", "dm": True, "platform": "slack"},
    ]
    app = await start_app(
        db_path, anthropic_api, slack_api, acme_extra={"agents": AGENTS, "bindings": bindings}
    )
    try:
        slack = SlackSide(app, slack_api)
        anthropic_api.script = [text("from ops"), text("from private")]
        await slack.say("how are the servers?", channel=OPS)
        await until(lambda: len(anthropic_api.requests) == 1)
        await slack.say("a private word", channel="DALICE")
        await until(lambda: len(anthropic_api.requests) == 2)
        ops, private = (system_of(r) for r in anthropic_api.requests)
        assert "You are the ops agent." in ops and "You are the private agent." in private
        await until(lambda: bool(slack_api.posts(OPS)) and bool(slack_api.posts("DALICE")))
    finally:
        await app.stop()


async def test_channel_chatter_is_ignored_a_mention_and_a_reply_in_its_thread_are_answered(
    db_path: Path, anthropic_api: FakeAnthropic, slack_api: FakeSlack
) -> None:
    app = await start_app(
        db_path, anthropic_api, slack_api, acme_extra={"respond_to": ["mention", "reply"]}
    )
    try:
        slack = SlackSide(app, slack_api)
        anthropic_api.script = [text("looking"), text("deploy is fine")]
        await slack.say("coffee?", channel=OPS, user=MALLORY)
        await slack.say("in a minute", channel=OPS)
        other = await slack.say("unrelated thread", channel=OPS, user=MALLORY)
        await slack.say("agreed", channel=OPS, thread_ts=other)
        assert await ignored(app) == sorted([MALLORY, ALICE, MALLORY, ALICE])
        asked = await slack.say(f"{BOT} is the build green?", channel=OPS, kind="app_mention")
        await until(lambda: len(slack_api.posts(OPS)) == 1)
        await slack.say("and the deploy?", channel=OPS, thread_ts=asked)
        await until(lambda: len(slack_api.posts(OPS)) == 2)
        first, second = slack_api.posts(OPS)
        assert first["thread_ts"] == second["thread_ts"] == asked
        assert (first["text"], second["text"]) == ("looking", "deploy is fine")
        prompts = [json.dumps(r["messages"]) for r in anthropic_api.requests]
        assert "is the build green?" in prompts[0] and BOT not in prompts[0]
        assert "and the deploy?" in prompts[1] and len(prompts) == 2
        assert slack_api.refused == []
    finally:
        await app.stop()


async def test_a_stranger_who_mentions_the_bot_is_refused_once(
    db_path: Path, anthropic_api: FakeAnthropic, slack_api: FakeSlack
) -> None:
    app = await start_app(db_path, anthropic_api, slack_api)
    try:
        slack = SlackSide(app, slack_api)
        for words in ("do my homework", "please"):
            await slack.say(f"{BOT} {words}", channel=OPS, user=MALLORY, kind="app_mention")
        root = await slack.say("lunch, anyone?", channel=OPS, user=MALLORY)
        await slack.say("just chatting", channel=OPS, user=MALLORY, thread_ts=root)
        await until(lambda: len(slack_api.posts(OPS)) == 1)
        await app.bridge.settle()
        [refusal] = slack_api.posts(OPS)
        assert refusal["text"].startswith("You are not an operator")
        assert anthropic_api.requests == []
    finally:
        await app.stop()


async def test_the_slash_command_answers_its_operator_alone_and_refuses_a_stranger(
    db_path: Path, anthropic_api: FakeAnthropic, slack_api: FakeSlack
) -> None:
    app = await start_app(db_path, anthropic_api, slack_api, slack_extra={"slash_command": "/sb"})
    try:
        slack = SlackSide(app, slack_api)
        for i, words in enumerate(("", "queue collect", "status")):
            answer = await slack.slash(words, command="/sb")
            assert (answer.status, answer.body) == (200, ""), "acknowledged, answered apart"
            await until(lambda i=i: len(slack_api.responses) == i + 1)
        await slack.slash("status", user=MALLORY, command="/sb", channel=OPS)
        await until(lambda: len(slack_api.responses) == 4)
        assert {r["response_type"] for r in slack_api.responses} == {"ephemeral"}
        texts = [r["text"] for r in slack_api.responses]
        help_text = texts[0]
        assert help_text.startswith("/sb followed by")
        assert "/sb queue steer|followup" in help_text and "/sb stop - " in help_text
        assert texts[1] == "Queue mode for this conversation is now collect."
        assert texts[2].startswith("assistant: idle.\n")
        collect = "messages sent during a turn are answered together after it"
        assert f"Queue: empty (mode collect: {collect})." in texts[2]
        assert texts[3].startswith("You are not an operator")
        assert slack_api.posts() == [], "nothing was posted in the conversations"
        assert anthropic_api.requests == []
        assert slack_api.refused == []
    finally:
        await app.stop()


async def test_a_new_assistant_thread_gets_suggested_prompts_where_slack_allows_them(
    db_path: Path, anthropic_api: FakeAnthropic, slack_api: FakeSlack
) -> None:
    prompts = [{"title": "Deploy", "message": "deploy the main branch"}]
    app = await start_app(
        db_path, anthropic_api, slack_api, slack_extra={"suggested_prompts": prompts}
    )
    try:
        slack = SlackSide(app, slack_api)

        def started(thread_ts: str) -> str:
            event = {
                "type": "assistant_thread_started",
                "assistant_thread": {
                    "user_id": ALICE,
                    "context": {"channel_id": OPS, "team_id": "T1", "enterprise_id": None},
                    "channel_id": "DALICE",
                    "thread_ts": thread_ts,
                },
                "event_ts": thread_ts,
            }
            return slack.envelope("T1", event)

        assert (await slack.post(started("1729999327.187299"))).status == 200
        await until(
            lambda: len(slack_api.method_calls("assistant.threads.setSuggestedPrompts")) == 1
        )
        assert slack_api.suggested == [], "this app has no assistant scope: refused, quietly"
        next(t for t in slack_api.teams.values() if t.team_id == "T1").assistant = True
        assert (await slack.post(started("1729999400.000100"))).status == 200
        await until(lambda: bool(slack_api.suggested))
        assert slack_api.suggested == [("DALICE", "1729999400.000100", prompts)]
        assert slack_api.refused == []
    finally:
        await app.stop()
