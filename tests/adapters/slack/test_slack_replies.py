"""Slack, issue 12 items 4 and 6: a thread reply under a notification and its Block Kit
buttons (signed `block_actions` payloads into slack-bolt), and the thread the bot is
mentioned in passed as context (read with `conversations.replies` from the fake Web API)."""

from __future__ import annotations

from typing import Any

from adapters.server.app import App
from tests.adapters.slack_harness import ALICE, BOB, MALLORY, OPS, SlackSide
from tests.fakes.anthropic_api import FakeAnthropic, text, tools
from tests.fakes.slack_api import FakeSlack
from tests.runtime.helpers import until

DM = "DALICE"
STOP, STATUS = "switchboard_notification_stop", "switchboard_notification_status"


def last_user_text(body: dict[str, Any]) -> str:
    content = body["messages"][-1]["content"]
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content if b.get("type") == "text")


def notification(slack: FakeSlack, channel: str) -> dict[str, Any] | None:
    return next(
        (m for m in slack.messages.get(channel, []) if str(m["text"]).startswith("\U0001f514")),
        None,
    )


def said(slack: FakeSlack, channel: str, start: str) -> dict[str, Any] | None:
    return next((m for m in slack.posts(channel) if str(m["text"]).startswith(start)), None)


async def notify(app: App, slack: SlackSide, anthropic: FakeAnthropic, channel: str) -> None:
    anthropic.script = [
        tools(("notify_operator", {"message": "Disk at 95%\nShall I clean /tmp?"})),
        text("I asked the operator."),
    ]
    await slack.say("check the disk", channel=channel)
    await until(lambda: said(slack.fake, channel, "I asked the operator.") is not None)
    await app.bridge.settle()


async def test_a_thread_reply_under_a_notification_reaches_the_agent(
    app: App, slack_api: FakeSlack, anthropic_api: FakeAnthropic
) -> None:
    slack = SlackSide(app, slack_api)
    await notify(app, slack, anthropic_api, DM)
    posted = notification(slack_api, DM)
    assert posted is not None and posted["thread_ts"] is None, "top level in the DM"
    *sections, actions = posted["blocks"]
    assert "raised by agent assistant" in sections[-1]["text"]["text"]
    assert [(b["action_id"], b["text"]["text"]) for b in actions["elements"]] == [
        (STOP, "Stop"),
        (STATUS, "Status"),
    ]
    [record] = await app.runtime.store.notifications()

    anthropic_api.script = [text("Cleaning /tmp now.")]
    await slack.say("yes, go ahead", channel=DM, thread_ts=posted["ts"])
    await until(lambda: said(slack_api, DM, "Cleaning /tmp now.") is not None)
    prompt = last_user_text(anthropic_api.requests[-1])
    assert prompt == (
        f'[The operator answers your notification {record.notification_id}: "Disk at 95%"]\n'
        "[The operator's message]\nyes, go ahead"
    )
    first = anthropic_api.requests[-1]["messages"][0]["content"][0]["text"]
    assert first == "check the disk", "the session of the agent that raised it"
    answer = said(slack_api, DM, "Cleaning /tmp now.")
    assert answer is not None and answer["thread_ts"] == posted["ts"], "answered in the thread"
    entries = await app.runtime.store.messages(session_id=record.session_id)
    assert entries[-1].message.provenance.correlation_id == record.notification_id
    assert slack_api.refused == []


async def test_notification_buttons_answer_operators_and_refuse_strangers(
    app: App, slack_api: FakeSlack, anthropic_api: FakeAnthropic
) -> None:
    slack = SlackSide(app, slack_api)
    await notify(app, slack, anthropic_api, OPS)
    posted = notification(slack_api, OPS)
    assert posted is not None

    assert (await slack.click(posted, OPS, STATUS)).status == 200
    await until(lambda: said(slack_api, OPS, "assistant: idle.") is not None)

    assert (await slack.click(posted, OPS, STOP)).status == 200
    await until(lambda: said(slack_api, OPS, "Agent acme/assistant is not working") is not None)

    assert (await slack.click(posted, OPS, STOP, user=MALLORY)).status == 200
    await until(lambda: said(slack_api, OPS, "You are not an operator") is not None)
    refused = [
        e.data for e in await app.runtime.store.events_after(0) if e.type == "inbound_refused"
    ]
    assert [r.sender_id for r in refused] == [MALLORY]
    assert slack_api.refused == []


async def test_a_mention_in_a_channel_thread_brings_the_threads_recent_messages(
    app: App, slack_api: FakeSlack, anthropic_api: FakeAnthropic
) -> None:
    slack = SlackSide(app, slack_api)
    bot = slack_api.teams["xoxb-test-t1"].bot_user_id
    root = slack_api.add_user_message(OPS, "deploy failed on web-3", BOB)
    for i in range(30):
        slack_api.add_user_message(OPS, f"retry {i} failed too", BOB, thread_ts=root)
    slack_api.add_user_message(OPS, "log: " + "e" * 5_000, BOB, thread_ts=root)
    anthropic_api.script = [text("Looking."), text("Still looking.")]

    await slack.say(f"<@{bot}> can you look?", channel=OPS, thread_ts=root)
    await until(lambda: said(slack_api, OPS, "Looking.") is not None)
    [read] = slack_api.method_calls("conversations.replies")
    assert (read["channel"], read["ts"]) == (OPS, root)
    prompt = last_user_text(anthropic_api.requests[-1])
    context, words = prompt.split("\n[The operator's message]\n")
    assert words == "can you look?"
    assert context.startswith("[Context the operator pointed at")
    assert context.count("[message by someone else (UBOB), not an operator]") == 20
    assert "\n[12 earlier message(s) left out]\n" in context, "32 in the thread before it"
    assert "> log: " + "e" * 1_995 + " [\u2026 cut]" in context, "one message is bounded"
    assert "retry 29 failed too" in context and "retry 10 failed" not in context, "the newest"
    assert "deploy failed on web-3" not in context

    await slack.say(f"<@{bot}> and now?", channel=OPS, thread_ts=root)
    await until(lambda: said(slack_api, OPS, "Still looking.") is not None)
    assert len(slack_api.method_calls("conversations.replies")) == 1, "read once, when new"
    assert last_user_text(anthropic_api.requests[-1]) == "and now?"
    assert slack_api.refused == []


async def test_thread_context_is_bounded_in_characters(
    app: App, slack_api: FakeSlack, anthropic_api: FakeAnthropic
) -> None:
    slack = SlackSide(app, slack_api)
    bot = slack_api.teams["xoxb-test-t1"].bot_user_id
    root = slack_api.add_user_message(OPS, "incident 42", ALICE)
    for i in range(5):
        slack_api.add_user_message(OPS, f"{i}: " + "w" * 1_500, BOB, thread_ts=root)
    anthropic_api.script = [text("Reading.")]
    await slack.say(f"<@{bot}> summarize", channel=OPS, thread_ts=root)
    await until(lambda: said(slack_api, OPS, "Reading.") is not None)
    context = last_user_text(anthropic_api.requests[-1]).split("\n[The operator's message]\n")[0]
    quoted = [line[2:] for line in context.splitlines() if line.startswith("> ")]
    assert [q[:2] for q in quoted] == ["2:", "3:", "4:"], "the newest that fit 6,000 characters"
    assert "[3 earlier message(s) left out]" in context


async def test_a_thread_too_slow_to_read_leaves_the_context_out_not_the_message(
    app: App, slack_api: FakeSlack, anthropic_api: FakeAnthropic
) -> None:
    slack = SlackSide(app, slack_api)
    bot = slack_api.teams["xoxb-test-t1"].bot_user_id
    root = slack_api.add_user_message(OPS, "incident 43", BOB)
    slack_api.fail("conversations.replies", 200, stall_s=1.5)
    anthropic_api.script = [text("On it.")]
    await slack.say(f"<@{bot}> help", channel=OPS, thread_ts=root)  # acknowledged: 200
    await until(lambda: said(slack_api, OPS, "On it.") is not None)
    assert last_user_text(anthropic_api.requests[-1]) == "help"


async def test_a_long_notification_keeps_its_links_whole_beside_its_buttons(
    app: App, slack_api: FakeSlack, anthropic_api: FakeAnthropic
) -> None:
    """A section block beside the buttons holds 3,000 characters: the notification is split
    there, between lines, never inside a link."""
    lines = [f"Check [report {i}](https://example.com/reports/{i}?page=1) now." for i in range(55)]
    anthropic_api.script = [
        tools(("notify_operator", {"message": "\n".join(lines)})),
        text("I asked the operator."),
    ]
    slack = SlackSide(app, slack_api)
    await slack.say("check the reports", channel=DM)
    await until(lambda: said(slack_api, DM, "I asked the operator.") is not None)
    await app.bridge.settle()
    first = notification(slack_api, DM)
    assert first is not None
    rest = [m for m in slack_api.posts(DM) if not str(m["text"]).startswith("I asked")]
    *sections, actions = first["blocks"]
    assert len(sections) == 1 and len(sections[0]["text"]["text"]) <= 3000
    assert actions["type"] == "actions", "the buttons on the first part"
    shown = "\n".join(str(m["text"]) for m in [first, *rest])
    for i in range(55):
        assert f"<https://example.com/reports/{i}?page=1|report {i}>" in shown, i
    assert rest, "split in more than one message"
    assert slack_api.refused == []
