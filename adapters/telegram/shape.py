"""A Telegram update's shape, checked on the parsed JSON before anything builds objects from it:
the fields our handlers read, and the objects python-telegram-bot builds on the way to them,
of the types the Bot API documents.

The doors check only this (building PTB's objects costs ~250 µs an update, most of the door
process's CPU at 1,000 updates a second); the stored update is parsed fully when it is decoded
(`updates.py`)."""

from __future__ import annotations

from typing import Any

# What a field holds: a type (`int` never a boolean), an object's shape, or a list of one.
Kind = type | dict[str, Any] | list[Any]
REQUIRED = "!"  # a name ending in it must be present

USER: dict[str, Kind] = {
    "id!": int,
    "is_bot!": bool,
    "first_name!": str,
    "last_name": str,
    "username": str,
}
CHAT: dict[str, Kind] = {"id!": int, "type!": str, "title": str, "username": str}
ENTITIES: list[Any] = [{"type!": str, "offset!": int, "length!": int}]
FILE: dict[str, Kind] = {"file_id!": str, "file_unique_id!": str, "file_size": int}
MESSAGE_FIELDS: dict[str, Kind] = {
    "message_id!": int,
    "date!": int,
    "chat!": CHAT,
    "from": USER,
    "sender_chat": CHAT,
    "message_thread_id": int,
    "is_topic_message": bool,
    "text": str,
    "entities": ENTITIES,
    "caption": str,
    "caption_entities": ENTITIES,
    "photo": [FILE],
    **{name: FILE for name in ("document", "audio", "voice", "video", "video_note", "animation")},
    "quote": {"text!": str},
    "external_reply": {"origin!": {}},  # {}: any object
}
# The message replied to is a message too (one level down is what the handlers read).
MESSAGE: dict[str, Kind] = {**MESSAGE_FIELDS, "reply_to_message": MESSAGE_FIELDS}
UPDATE: dict[str, Kind] = {
    **{
        name: MESSAGE
        for name in ("message", "edited_message", "channel_post", "edited_channel_post")
    },
    "callback_query": {
        "id!": str,
        "from!": USER,
        "chat_instance!": str,
        "data": str,
        "message": MESSAGE,  # an inaccessible one has these three fields only: they fit
    },
    "my_chat_member": {"chat!": CHAT, "from!": USER, "date!": int},
}
# Where an update's conversation is read from, first present wins (PTB's effective_message).
CONVERSATION_KEYS = (
    "message",
    "edited_message",
    "callback_query",
    "channel_post",
    "edited_channel_post",
)

_JSON_NAMES = {
    dict: "an object",
    list: "a list",
    str: "a string",
    bool: "a boolean",
    int: "an integer",
    float: "a number",
    type(None): "null",
}


def problem(data: object) -> str | None:
    """What makes parsed JSON no Telegram update our handlers can read, or None."""
    if not isinstance(data, dict):
        return f"an update is a JSON object, not {_name(data).replace('an integer', 'a number')}"
    if type(data.get("update_id")) is not int:
        return "`update_id` is missing or not an integer"
    found = _object_problem(data, UPDATE, "")
    return f"not a Telegram update: {found}" if found else None


def place(data: dict[str, Any]) -> str:
    """The conversation a checked update belongs to (a chat, a forum topic), as
    `adapters/telegram/inbound.py` makes sessions: updates of one place are handled in the
    order they came, different places side by side."""
    for key in CONVERSATION_KEYS:
        message = data.get(key)
        if message is None:
            continue
        if key == "callback_query":
            message = message.get("message")
            if message is None:
                return ""
        topic = message.get("message_thread_id") if message.get("is_topic_message") else None
        return f"{message['chat']['id']}:{topic or ''}"
    return ""


def _object_problem(value: dict[str, Any], shape: dict[str, Kind], path: str) -> str | None:
    for key, kind in shape.items():
        name = key.rstrip(REQUIRED)
        field = value.get(name)
        where = f"{path}{name}"
        if field is None:
            if key.endswith(REQUIRED):
                return f"`{where}` is missing"
            continue
        found = _value_problem(field, kind, where)
        if found:
            return found
    return None


def _value_problem(value: object, kind: Kind, where: str) -> str | None:
    if isinstance(kind, dict):
        if not isinstance(value, dict):
            return f"`{where}` is {_name(value)}, not an object"
        return _object_problem(value, kind, f"{where}.")
    if isinstance(kind, list):
        if not isinstance(value, list):
            return f"`{where}` is {_name(value)}, not a list"
        for n, item in enumerate(value):
            found = _value_problem(item, kind[0], f"{where}[{n}]")
            if found:
                return found
        return None
    if type(value) is not kind:
        return f"`{where}` is {_name(value)}, not {_JSON_NAMES[kind]}"
    return None


def _name(value: object) -> str:
    return _JSON_NAMES.get(type(value), type(value).__name__)
