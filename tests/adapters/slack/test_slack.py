"""Slack end to end: slack-bolt behind our aiohttp server receiving correctly signed
requests, `AsyncWebClient` against the loopback fake Web API (checked against the published
spec), the real App, bridge and runtime, the fake Anthropic API."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from adapters.server.app import App
from bridge.types import DeliveryKind, InboundChat
from bridge.verdicts import Outcome
from config import ConfigError
from runtime.events import EventType
from runtime.store.store import Store
from tests.adapters.slack_harness import (
    ACME_SECRET,
    ALICE,
    BOB,
    GLOBEX_SECRET,
    MALLORY,
    OPS,
    SlackSide,
    globex_workspace,
    start_app,
)
from tests.fakes.anthropic_api import FakeAnthropic, text, tools
from tests.fakes.slack_api import FakeSlack
from tests.runtime.helpers import blocking_tool, until, wait_for
from tests.topology import drained


async def test_dm_gets_a_reply_with_reactions_and_progress_cleared(
    app: App, slack: SlackSide, slack_api: FakeSlack, anthropic_api: FakeAnthropic
) -> None:
    anthropic_api.script = [text("Hello **Alice** & <co>")]
    ts = await slack.say("hi", channel="DALICE")
    await until(lambda: bool(slack_api.posts("DALICE")))
    [reply] = slack_api.posts("DALICE")
    assert reply["text"] == "Hello *Alice* &amp; &lt;co&gt;"
    assert reply["thread_ts"] is None, "a DM's top level is one session, answered there"
    assert reply["metadata"]["event_payload"]["chunk"] == 0
    await until(lambda: ("add", "DALICE", ts, "white_check_mark") in slack_api.reactions)
    assert ("add", "DALICE", ts, "eyes") in slack_api.reactions
    assert not [m for m in slack_api.messages["DALICE"] if "blocks" in m], "progress cleared"
    assert slack_api.refused == []
    assert anthropic_api.requests[0]["messages"][0]["content"][0]["text"] == "hi"
    assert ALICE


async def test_signatures_are_checked_and_url_verification_answered(
    app: App, slack: SlackSide
) -> None:
    body = slack.envelope("T1", slack.message("hi"))
    assert (await slack.post(body, bad_signature=True)).status == 401
    assert (await slack.post(body, age_s=6 * 60)).status == 401, "older than 5 minutes"
    assert (await slack.post(body, secret="not-the-secret")).status == 401
    assert await app.runtime.store.messages() == []
    challenge = json.dumps({"token": "t", "challenge": "abc123", "type": "url_verification"})
    answer = await slack.post(challenge)
    assert answer.status == 200 and json.loads(answer.body) == {"challenge": "abc123"}
    assert (await slack.post(body)).status == 200
    await drained(app)
    [stored] = await app.runtime.store.messages()
    assert stored.message.text == "hi"


async def test_a_retry_of_an_accepted_event_is_ignored_an_unseen_one_processed(
    app: App, slack: SlackSide, anthropic_api: FakeAnthropic
) -> None:
    anthropic_api.responder = lambda body: text("ok")
    first = slack.envelope("T1", slack.message("once"))
    assert (await slack.post(first)).status == 200
    assert (await slack.post(first, retry=1)).status == 200
    assert (await slack.post(first, retry=2)).status == 200
    never_seen = slack.envelope("T1", slack.message("we lost the first delivery"))
    assert (await slack.post(never_seen, retry=1)).status == 200
    await drained(app)
    texts = sorted(m.message.text for m in await app.runtime.store.messages())
    assert texts == ["once", "we lost the first delivery"]


async def test_channel_messages_are_answered_in_their_thread_one_session_a_thread(
    app: App, slack: SlackSide, slack_api: FakeSlack, anthropic_api: FakeAnthropic
) -> None:
    anthropic_api.responder = lambda body: text(f"turn with {len(body['messages'])} messages")
    top = await slack.say("deploy status?", channel=OPS)
    await until(lambda: len(slack_api.posts(OPS)) == 1)
    await slack.say("and staging?", channel=OPS, thread_ts=top)
    await until(lambda: len(slack_api.posts(OPS)) == 2)
    first, second = slack_api.posts(OPS)
    assert first["thread_ts"] == top and second["thread_ts"] == top
    assert (first["text"], second["text"]) == ("turn with 1 messages", "turn with 3 messages")
    other = await slack.say("unrelated", channel=OPS)
    await until(lambda: len(slack_api.posts(OPS)) == 3)
    assert slack_api.posts(OPS)[2]["thread_ts"] == other, "a new thread, a new session"
    assert slack_api.posts(OPS)[2]["text"] == "turn with 1 messages"


async def test_what_is_not_for_the_agent_is_left_alone(
    app: App, slack: SlackSide, slack_api: FakeSlack, anthropic_api: FakeAnthropic
) -> None:
    bot = slack_api.teams["xoxb-test-t1"]
    await slack.say("chatter in a channel we were invited to", channel="CRANDOM")
    await slack.say("edited", channel=OPS, subtype="message_changed")
    await slack.say("gone", channel=OPS, subtype="message_deleted")
    await slack.say("from another bot", channel=OPS, bot_id="BOTHER")
    await slack.say("our own post", channel=OPS, user=bot.bot_user_id)
    await slack.say("let me in", user=MALLORY, channel="DMALLORY")
    mention = f"<@{bot.bot_user_id}> do something here"
    await slack.say(mention, channel="CRANDOM", kind="app_mention")
    await drained(app)
    await until(lambda: len(slack_api.posts()) == 2)
    assert slack_api.posts("DMALLORY")[0]["text"].startswith("You are not an operator")
    assert slack_api.posts("CRANDOM")[0]["text"].startswith("I don't take instructions")
    assert await app.runtime.store.messages() == []
    assert anthropic_api.requests == []


async def test_a_mention_is_stripped_and_the_bridge_commands_work(
    app: App, slack: SlackSide, slack_api: FakeSlack
) -> None:
    bot = slack_api.teams["xoxb-test-t1"]
    await slack.say(f"<@{bot.bot_user_id}> /status", channel=OPS, kind="app_mention")
    await until(lambda: bool(slack_api.posts(OPS)))
    assert slack_api.posts(OPS)[0]["text"].startswith("No session here yet")


async def test_a_10000_character_answer_arrives_whole_in_order_within_the_rate(
    app: App, slack: SlackSide, slack_api: FakeSlack, anthropic_api: FakeAnthropic
) -> None:
    slack_api.enforce_rate = True  # more than one post a second in a channel: 429
    lines = [f"{i:05d} " + "lorem ipsum dolor sit amet " * 3 for i in range(120)]
    lines[60:60] = ["```", "code & <stuff> that must stay in one block", "```"]
    answer = "\n".join(lines)
    assert len(answer) > 10_000
    anthropic_api.script = [text(answer)]
    await slack.say("long please")
    await until(lambda: "00119" in "".join(m["text"] for m in slack_api.posts("DALICE")), 20)
    got = [m["text"] for m in slack_api.posts("DALICE")]
    assert len(got) in (3, 4) and all(len(t) <= 3900 for t in got)
    assert sum(t.count("```") for t in got) == 2 and any(
        "```\ncode &amp; &lt;stuff&gt; that must stay in one block\n```" in t for t in got
    )
    chunks = [m["metadata"]["event_payload"]["chunk"] for m in slack_api.posts("DALICE")]
    assert chunks == list(range(len(got)))
    received = [line for line in "\n".join(got).split("\n") if line[:5].isdigit()]
    assert [line.rstrip() for line in received] == [
        line.rstrip() for line in lines if line[:5].isdigit()
    ]
    assert slack_api.refused == []


async def test_a_burst_under_429_loses_nothing_and_keeps_order(
    app: App, slack: SlackSide, slack_api: FakeSlack, anthropic_api: FakeAnthropic
) -> None:
    anthropic_api.responder = lambda body: text(
        "re: " + body["messages"][-1]["content"][-1]["text"].split()[-1]
    )
    slack_api.fail(
        "chat.postMessage", 429, retry_after=1, times=2, when=lambda args: "blocks" not in args
    )
    for i in range(4):
        await slack.say(f"msg {i}")
        await until(lambda i=i: len(anthropic_api.requests) >= i + 1)
        await app.runtime.wait_idle()
    await until(lambda: len(slack_api.posts("DALICE")) == 4, 20)
    assert [m["text"] for m in slack_api.posts("DALICE")] == [f"re: {i}" for i in range(4)]


async def test_a_timed_out_post_is_looked_up_and_not_posted_twice(
    app: App, slack: SlackSide, slack_api: FakeSlack, anthropic_api: FakeAnthropic
) -> None:
    anthropic_api.script = [text("exactly once")]
    # Slack stores the post but the answer comes after the client's 1 s timeout.
    slack_api.fail("chat.postMessage", 200, stall_s=2.5, when=lambda args: "blocks" not in args)
    await slack.say("hello")
    await until(lambda: bool(slack_api.method_calls("conversations.history")), 15)
    await app.bridge.settle()
    assert [m["text"] for m in slack_api.posts("DALICE")] == ["exactly once"]
    lookup = slack_api.method_calls("conversations.history")[0]
    assert lookup["channel"] == "DALICE" and lookup["include_all_metadata"] in ("1", True)
    intents = await app.bridge.store.intents()
    results = [(i.status, i.attempts) for i in intents if i.kind is DeliveryKind.TURN_RESULT]
    assert results == [("accepted_by_transport", 1)]


async def test_a_5xx_post_that_did_not_land_is_sent_again_once(
    app: App, slack: SlackSide, slack_api: FakeSlack, anthropic_api: FakeAnthropic
) -> None:
    anthropic_api.script = [text("after a hiccup")]
    top = await slack.say("hello", channel=OPS)
    slack_api.fail("chat.postMessage", 500, when=lambda args: "blocks" not in args)
    await until(lambda: bool(slack_api.posts(OPS)), 15)
    await app.bridge.settle()
    assert [m["text"] for m in slack_api.posts(OPS)] == ["after a hiccup"]
    [lookup] = slack_api.method_calls("conversations.replies")
    assert lookup["ts"] == top, "the thread was searched before the resend"


async def test_stop_button_while_a_tool_runs_and_a_status_line_where_allowed(
    db_path: Path, tmp_path: Path, anthropic_api: FakeAnthropic, slack_api: FakeSlack
) -> None:
    slack_api.teams["xoxb-test-t1"].assistant = True
    gate, marker = tmp_path / "never", tmp_path / "pids"
    tool = blocking_tool("wait", gate, marker)
    anthropic_api.script = [tools(("wait", {}))]
    app = await start_app(db_path, anthropic_api, slack_api, agent_tools=["wait"], tools=[tool])
    slack = SlackSide(app, slack_api)
    try:
        top = await slack.say("run it", channel=OPS)
        await wait_for(app.runtime, EventType.TOOL_STARTED)
        await until(lambda: any("blocks" in m for m in slack_api.messages[OPS]))
        progress = next(m for m in slack_api.messages[OPS] if "blocks" in m)
        assert progress["thread_ts"] == top
        [button] = progress["blocks"][1]["elements"]
        assert (button["action_id"], button["text"]["text"]) == ("switchboard_stop", "Stop")
        await until(lambda: any(s[2].startswith("is working") for s in slack_api.statuses))
        await until(lambda: bool(slack_api.method_calls("chat.update")), 5)  # step changed
        answer = await slack.click_stop(progress, OPS)
        assert answer.status == 200
        await until(lambda: any(m["text"] == "Stopped." for m in slack_api.posts(OPS)))
        finished = await wait_for(app.runtime, EventType.TOOL_FINISHED)
        assert finished.data.status == "cancelled"
        await until(lambda: slack_api.statuses[-1] == (OPS, top, ""))
        assert slack_api.refused == []
    finally:
        await app.stop()


async def test_an_interjection_while_a_tool_runs(
    db_path: Path, tmp_path: Path, anthropic_api: FakeAnthropic, slack_api: FakeSlack
) -> None:
    gate, marker = tmp_path / "gate", tmp_path / "pids"
    tool = blocking_tool("wait", gate, marker)
    anthropic_api.script = [tools(("wait", {})), text("done, and noted")]
    app = await start_app(db_path, anthropic_api, slack_api, agent_tools=["wait"], tools=[tool])
    slack = SlackSide(app, slack_api)
    try:
        top = await slack.say("deploy", channel=OPS)
        await wait_for(app.runtime, EventType.TOOL_STARTED)
        await slack.say("use the blue cluster", channel=OPS, thread_ts=top)
        await wait_for(
            app.runtime,
            EventType.MESSAGE_QUEUED,
            lambda e: e.data.status == "waiting_for_safe_point",
        )
        gate.touch()
        await until(lambda: any(m["text"] == "done, and noted" for m in slack_api.posts(OPS)))
        admitted = await wait_for(app.runtime, EventType.OPERATOR_INTERJECTION_ADMITTED)
        assert admitted.data.boundary == "after_tool_results"
        last = anthropic_api.requests[-1]["messages"][-1]["content"]
        assert [b["type"] for b in last] == ["tool_result", "text"]
        assert "use the blue cluster" in last[1]["text"] and "via slack" in last[1]["text"]
    finally:
        await app.stop()


async def test_two_workspaces_in_one_process_stay_apart(
    db_path: Path, anthropic_api: FakeAnthropic, slack_api: FakeSlack
) -> None:
    anthropic_api.responder = lambda body: text("reply")
    app = await start_app(
        db_path, anthropic_api, slack_api, more_workspaces=[globex_workspace(slack_api)]
    )
    slack = SlackSide(app, slack_api)
    try:
        await slack.say("for acme")
        await slack.say("for globex", team="T2", secret=GLOBEX_SECRET, user=BOB, channel="DBOB")
        await slack.say("alice tries globex", team="T2", secret=GLOBEX_SECRET, channel="DALICE2")
        forged = slack.envelope("T2", slack.message("acme's secret, globex's team", team="T2"))
        assert (await slack.post(forged, secret=ACME_SECRET)).status == 401
        await until(lambda: len(slack_api.posts()) == 3)
        by_channel = {
            c: [(m["team"], m["text"]) for m in slack_api.posts(c)] for c in slack_api.messages
        }
        assert by_channel["DALICE"] == [("T1", "reply")]
        assert by_channel["DBOB"] == [("T2", "reply")], "globex answers with globex's token"
        assert by_channel["DALICE2"][0][1].startswith("You are not an operator"), (
            "an operator of one workspace cannot drive another's agent"
        )
        agents = sorted(m.message.text for m in await app.runtime.store.messages())
        assert agents == ["for acme", "for globex"]
    finally:
        await app.stop()


async def test_a_channel_gone_marks_the_route_failed(
    app: App, slack: SlackSide, slack_api: FakeSlack, anthropic_api: FakeAnthropic
) -> None:
    anthropic_api.script = [text("into the void")]
    slack_api.fail(
        "chat.postMessage", 200, error="channel_not_found", when=lambda a: "blocks" not in a
    )
    await slack.say("hi", channel=OPS)
    await until(lambda: "COPS" in str(app.bridge.outbox.failed_routes))
    events = [e.data for e in await app.runtime.store.events_after(0) if e.type == "route_failed"]
    assert "channel_not_found" in str(events[0].model_dump()["reason"])


async def test_a_wrong_token_is_a_clear_error(
    db_path: Path, anthropic_api: FakeAnthropic, slack_api: FakeSlack
) -> None:
    with pytest.raises(ConfigError) as caught:
        await start_app(db_path, anthropic_api, slack_api, token="xoxb-wrong")
    assert "workspace acme: Slack at" in str(caught.value)
    assert "invalid_auth" in str(caught.value) and "Check slack.bot_token" in str(caught.value)
    store = await Store.open(db_path)  # the failed start let go of the database
    await store.close()


async def test_the_ack_goes_out_within_3_s_even_when_storing_stalls(
    app: App, slack: SlackSide, monkeypatch: pytest.MonkeyPatch
) -> None:
    receive = app.bridge.receive

    async def stalled_disk(chat: InboundChat) -> Outcome:
        await asyncio.sleep(3.5)
        return await receive(chat)

    monkeypatch.setattr(app.bridge, "receive", stalled_disk)
    started = time.monotonic()
    answer = await slack.post(slack.envelope("T1", slack.message("slow disk")))
    assert answer.status == 200 and time.monotonic() - started < 3.0
    await wait_for(app.runtime, EventType.MESSAGE_QUEUED)
    [stored] = await app.runtime.store.messages()
    assert stored.message.text == "slow disk", "acknowledged early, and still stored"


async def test_a_mention_that_also_arrives_as_a_channel_message_is_taken_once(
    app: App, slack: SlackSide, slack_api: FakeSlack, anthropic_api: FakeAnthropic
) -> None:
    anthropic_api.responder = lambda body: text("once")
    bot = slack_api.teams["xoxb-test-t1"]
    event = slack.message(f"<@{bot.bot_user_id}> check the queue", channel=OPS)
    mention = {**event, "type": "app_mention"}
    mention.pop("channel_type")
    assert (await slack.post(slack.envelope("T1", event))).status == 200
    assert (await slack.post(slack.envelope("T1", mention))).status == 200
    await drained(app)
    [stored] = await app.runtime.store.messages()
    assert stored.message.text == "check the queue"
    await until(lambda: bool(slack_api.posts(OPS)))
    await app.bridge.settle()
    assert [m["text"] for m in slack_api.posts(OPS)] == ["once"]


async def test_a_file_without_text_gets_a_clear_reply(
    app: App, slack: SlackSide, slack_api: FakeSlack
) -> None:
    archive = slack_api.files.add("T1", ALICE, "backup.zip", "application/zip", b"PK\x03\x04")
    await slack.say("", subtype="file_share", files=[archive])
    await until(lambda: bool(slack_api.posts("DALICE")))
    assert slack_api.posts("DALICE")[0]["text"] == (
        "Not passed to the agent: backup.zip (the agent reads images (JPEG, PNG, GIF, WebP), "
        "PDFs and text or code files, not application/zip). There was nothing else in your "
        "message, so the agent got nothing."
    )
    assert slack_api.files.downloads == [], "a kind the agent cannot read is not downloaded"
