"""Real payload shapes, as Slack and Telegram send them: Slack events and interactions from
slack-bolt's own test fixtures (on our team and ids, checked against the Events API wrapper
schema), Telegram updates checked against the published Bot API spec."""

from __future__ import annotations

import json
import time
from typing import Any
from urllib.parse import urlencode

import jsonschema

from tests.adapters.slack_harness import ALICE, OPS, WRAPPER_SCHEMA, SlackSide
from tests.fakes.telegram_spec import SPEC

OPERATOR = 1001  # alice's Telegram id
STRANGER = 666


# -- real Slack payloads (slack-bolt's test fixtures, on our team and ids) --------------------

_ts = iter(range(1_700_000_000, 1_800_000_000))


def slack_ts() -> str:
    return f"{next(_ts)}.000100"


def envelope(event: dict[str, Any]) -> dict[str, Any]:
    payload = {
        "token": "verification-token",
        "team_id": "T1",
        "api_app_id": "A111",
        "event": event,
        "type": "event_callback",
        "event_id": f"Ev{next(_ts)}",
        "event_time": 1665102362,
        "authorizations": [
            {
                "enterprise_id": None,
                "team_id": "T1",
                "user_id": "UBOT",
                "is_bot": True,
                "is_enterprise_install": False,
            }
        ],
        "authed_users": ["UBOT"],
        "is_ext_shared_channel": False,
        "event_context": "1-message-T1-DALICE",
    }
    jsonschema.validate(payload, WRAPPER_SCHEMA)
    return payload


def message_changed(user: str = ALICE, channel: str = "DALICE") -> dict[str, Any]:
    ts, old = slack_ts(), slack_ts()
    return envelope(
        {
            "type": "message",
            "subtype": "message_changed",
            "message": {
                "type": "message",
                "text": "updated message",
                "user": user,
                "team": "T1",
                "edited": {"user": user, "ts": ts},
                "ts": old,
                "blocks": [
                    {
                        "type": "rich_text",
                        "block_id": "xwvU3",
                        "elements": [
                            {
                                "type": "rich_text_section",
                                "elements": [{"type": "text", "text": "updated message"}],
                            }
                        ],
                    }
                ],
            },
            "previous_message": {
                "type": "message",
                "text": "original message",
                "user": user,
                "team": "T1",
                "ts": old,
            },
            "channel": channel,
            "hidden": True,
            "ts": ts,
            "event_ts": ts,
            "channel_type": "im",
        }
    )


def message_deleted(user: str = ALICE, channel: str = "DALICE") -> dict[str, Any]:
    ts, old = slack_ts(), slack_ts()
    return envelope(
        {
            "type": "message",
            "subtype": "message_deleted",
            "previous_message": {
                "type": "message",
                "text": "Delete this message",
                "user": user,
                "team": "T1",
                "ts": old,
            },
            "channel": channel,
            "hidden": True,
            "deleted_ts": old,
            "event_ts": ts,
            "ts": ts,
            "channel_type": "im",
        }
    )


def bot_message(channel: str = OPS) -> dict[str, Any]:
    """A message of another app: with `bot_id`, and a user id of its own."""
    ts = slack_ts()
    return envelope(
        {
            "bot_id": "B999",
            "type": "message",
            "text": f"<@UBOT> Hi there! {ALICE} asked me to say hi",
            "user": "UB111",
            "ts": ts,
            "team": "T1",
            "bot_profile": {
                "id": "B999",
                "deleted": False,
                "name": "other-app",
                "updated": 1607307935,
                "app_id": "A222",
                "icons": {"image_36": "https://a.slack-edge.com/80588/img/plugins/app/bot_36.png"},
                "team_id": "T1",
            },
            "channel": channel,
            "event_ts": ts,
            "channel_type": "channel",
        }
    )


def classic_bot_message(channel: str = "DALICE") -> dict[str, Any]:
    ts = slack_ts()
    return envelope(
        {
            "type": "message",
            "subtype": "bot_message",
            "text": "Hi there! Thanks for sharing the info!",
            "ts": ts,
            "username": "classic-bot",
            "bot_id": "B888",
            "channel": channel,
            "event_ts": ts,
            "channel_type": "im",
        }
    )


def file_share(slack: SlackSide, user: str = ALICE, channel: str = "DALICE") -> dict[str, Any]:
    ts = slack.fake.add_user_message(channel, "here is the log", user, None)
    return envelope(
        {
            "type": "message",
            "text": "here is the log",
            "files": [
                {
                    "id": "F111",
                    "created": 1652227642,
                    "timestamp": 1652227642,
                    "name": "file.png",
                    "title": "file.png",
                    "mimetype": "image/png",
                    "filetype": "png",
                    "user": user,
                    "size": 92582,
                    "mode": "hosted",
                    "is_external": False,
                    "url_private": "https://files.slack.com/files-pri/T1-F111/file.png",
                    "permalink": "https://acme.slack.com/files/U111/F111/file.png",
                }
            ],
            "upload": False,
            "user": user,
            "display_as_bot": False,
            "ts": ts,
            "client_msg_id": "ca088267-717f-41a8-9db8-c98ae14ad6a0",
            "channel": channel,
            "subtype": "file_share",
            "event_ts": ts,
            "channel_type": "im",
        }
    )


def block_actions(user: str = ALICE, channel: str = "DALICE") -> dict[str, Any]:
    """A click on the Stop button of a progress message."""
    ts = slack_ts()
    return {
        "type": "block_actions",
        "user": {"id": user, "username": "alice", "name": "alice", "team_id": "T1"},
        "api_app_id": "A111",
        "token": "verification_token",
        "container": {"type": "message", "message_ts": ts, "channel_id": channel},
        "trigger_id": "111.222.valid",
        "team": {"id": "T1", "domain": "acme"},
        "enterprise": None,
        "is_enterprise_install": False,
        "channel": {"id": channel, "name": "directmessage"},
        "message": {
            "type": "message",
            "subtype": "bot_message",
            "text": "working",
            "ts": ts,
            "bot_id": "BBOT",
            "blocks": [],
        },
        "state": {"values": {}},
        "response_url": "https://hooks.slack.com/actions/T1/111/random-value",
        "actions": [
            {
                "action_id": "switchboard_stop",
                "block_id": "b",
                "text": {"type": "plain_text", "text": "Stop", "emoji": True},
                "value": "stop",
                "type": "button",
                "action_ts": f"{time.time():.6f}",
            }
        ],
    }


def form(payload: dict[str, Any]) -> str:
    return urlencode({"payload": json.dumps(payload)})


# -- real Telegram updates (Bot API 10.1, checked against its published spec) -----------------

_update_ids = iter(range(10_000, 10**9))
TYPES: dict[str, Any] = SPEC["types"]


def conforms(value: Any, types: list[str]) -> bool:
    """`value` has one of the Bot API `types`, recursively, with every required field."""
    for kind in types:
        if kind.startswith("Array of "):
            if isinstance(value, list) and all(conforms(v, [kind[9:]]) for v in value):
                return True
        elif kind in ("Integer", "Float"):
            if isinstance(value, int | float) and not isinstance(value, bool):
                return True
        elif kind == "String":
            if isinstance(value, str):
                return True
        elif kind in ("Boolean", "True"):
            if isinstance(value, bool):
                return True
        elif kind in TYPES:
            spec = TYPES[kind]
            if "subtypes" in spec:
                if conforms(value, spec["subtypes"]):
                    return True
            elif isinstance(value, dict):
                fields = {f["name"]: f for f in spec.get("fields", [])}
                if set(value) <= set(fields) and all(
                    (f["name"] in value or not f["required"])
                    and (f["name"] not in value or conforms(value[f["name"]], f["types"]))
                    for f in fields.values()
                ):
                    return True
    return False


def update(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    real = {"update_id": next(_update_ids), kind: payload}
    assert conforms(real, ["Update"]), real
    return real


ALICE_TG = {"id": OPERATOR, "is_bot": False, "first_name": "Alice", "language_code": "en"}
BOT_TG = {"id": 123456, "is_bot": True, "first_name": "Switchboard", "username": "sb_bot"}
ALICE_CHAT = {"id": OPERATOR, "first_name": "Alice", "type": "private"}


def tg_message(text_: str, sender: dict[str, Any] = ALICE_TG, **fields: Any) -> dict[str, Any]:
    chat = ALICE_CHAT if sender is ALICE_TG else {"id": sender["id"], "type": "private"}
    message_id = next(_update_ids)
    return (
        {"message_id": message_id, "from": sender, "chat": chat, "date": 1700000000}
        | ({"text": text_} if text_ else {})
        | fields
    )


def edited_message() -> dict[str, Any]:
    return update("edited_message", tg_message("fixed a typo", edit_date=1700000060))


def channel_post() -> dict[str, Any]:
    chat = {"id": -1001, "title": "Announcements", "type": "channel"}
    post = {"message_id": 3, "sender_chat": chat, "chat": chat, "date": 1700000000}
    return update("channel_post", post | {"text": "release 1.2 is out"})


def my_chat_member(old: str = "member", new: str = "kicked") -> dict[str, Any]:
    return update(
        "my_chat_member",
        {
            "chat": ALICE_CHAT,
            "from": ALICE_TG,
            "date": 1700000000,
            "old_chat_member": {"user": BOT_TG, "status": old},
            "new_chat_member": {"user": BOT_TG, "status": new, "until_date": 0},
        },
    )


def callback_query(
    sender: dict[str, Any] = ALICE_TG, *, inaccessible: bool = False
) -> dict[str, Any]:
    progress = {
        "message_id": 50,
        "from": BOT_TG,
        "chat": ALICE_CHAT,
        "date": 0 if inaccessible else 1700000000,
        "text": "\u23f3 thinking (3s)",
        "reply_markup": {"inline_keyboard": [[{"text": "Stop", "callback_data": "stop"}]]},
    }
    if inaccessible:  # a message older than 48 hours: Telegram sends only these three fields
        progress = {k: progress[k] for k in ("message_id", "chat", "date")}
    query = {
        "id": f"43{next(_update_ids)}",
        "from": sender,
        "message": progress,
        "chat_instance": "-123456789",
        "data": "stop",
    }
    return update("callback_query", query)


def photo_message() -> dict[str, Any]:
    photo = [{"file_id": "p1", "file_unique_id": "u1", "width": 90, "height": 90}]
    return update("message", tg_message("", photo=photo, caption="see this"))


def text_message(text_: str, sender: dict[str, Any] = ALICE_TG) -> dict[str, Any]:
    return update("message", tg_message(text_, sender))
