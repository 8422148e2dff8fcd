"""Which conversation a stored request belongs to, read from the payloads Slack and Telegram
send (shapes from their Events API and Bot API documentation): requests of one conversation
are handled in order, different conversations side by side, so the place must match how the
adapters make sessions."""

from __future__ import annotations

import json
import time
from typing import Any

from slack_sdk.signature import SignatureVerifier

from adapters.slack import verify as slack
from adapters.telegram import shape as telegram_shape
from adapters.telegram import updates
from tests.adapters.hostile.real_payloads import (
    ALICE_CHAT,
    callback_query,
    channel_post,
    edited_message,
    my_chat_member,
)
from tests.adapters.slack_harness import signature

SECRET = "place-secret"
KEY = slack.SlackKey("acme", "T1", SignatureVerifier(SECRET))


def checked(body: dict[str, Any]) -> slack.SlackRequest:
    text = json.dumps(body)
    stamp = str(int(time.time()))
    headers = {
        "content-type": "application/json",
        "x-slack-request-timestamp": stamp,
        "x-slack-signature": signature(SECRET, stamp, text),
    }
    result = slack.check([KEY], text.encode(), headers)
    assert isinstance(result, slack.SlackRequest), result
    return result


def event(**fields: Any) -> dict[str, Any]:
    return {"type": "event_callback", "team_id": "T1", "event_id": "Ev1", "event": fields}


def test_slack_places_follow_the_sessions() -> None:
    channel_top = checked(event(type="message", channel="COPS", ts="100.1", user="U1"))
    in_thread = checked(
        event(type="message", channel="COPS", ts="100.2", thread_ts="100.1", user="U1")
    )
    assert channel_top.place == in_thread.place == "COPS:100.1", "a channel message starts one"
    dm = checked(event(type="message", channel="D1", channel_type="im", ts="5.1", user="U1"))
    dm_later = checked(event(type="message", channel="D1", channel_type="im", ts="9.9", user="U1"))
    assert dm.place == dm_later.place == "D1:", "a DM's top level is one conversation"
    mention = checked(event(type="app_mention", channel="COPS", ts="7.7", user="U1"))
    assert mention.place == "COPS:7.7"
    command = checked(
        {"command": "/switchboard", "team_id": "T1", "channel_id": "COPS", "trigger_id": "1.2"}
    )
    assert command.place == "COPS"
    press = checked(
        {
            "type": "block_actions",
            "team": {"id": "T1"},
            "user": {"id": "U1"},
            "channel": {"id": "COPS"},
            "actions": [{"action_id": "switchboard_approve", "value": "x"}],
            "trigger_id": "2.3",
        }
    )
    assert press.place == "COPS"


def update(chat: dict[str, Any], **fields: Any) -> dict[str, Any]:
    data = {
        "update_id": 1,
        "message": {"message_id": 9, "date": 0, "chat": chat, "text": "hi", **fields},
    }
    assert telegram_shape.problem(data) is None
    assert not isinstance(updates.parse_update(data, None), str), "PTB reads it as well"
    return data


def test_telegram_places_are_chats_and_forum_topics() -> None:
    forum = {"id": -100, "type": "supergroup", "is_forum": True}
    topic = update(forum, message_thread_id=7, is_topic_message=True)
    assert telegram_shape.place(topic) == "-100:7"
    assert telegram_shape.place(update(forum)) == "-100:", "the general topic"
    reply_in_group = update({"id": -5, "type": "group"}, message_thread_id=3)
    assert telegram_shape.place(reply_in_group) == "-5:", "a reply thread is no topic"
    assert telegram_shape.place(update({"id": 42, "type": "private"})) == "42:"


def test_telegram_places_of_the_other_updates_the_bot_gets() -> None:
    alice = f"{ALICE_CHAT['id']}:"
    assert telegram_shape.place(callback_query()) == alice, "a button press: its message's chat"
    assert telegram_shape.place(callback_query(inaccessible=True)) == alice
    assert telegram_shape.place(edited_message()) == alice
    assert telegram_shape.place(channel_post()) == "-1001:"
    edited_post = {"update_id": 9, "edited_channel_post": channel_post()["channel_post"]}
    assert telegram_shape.place(edited_post) == "-1001:"
    assert telegram_shape.place(my_chat_member()) == "", "no message: a place of its own"
