"""The door process answers Telegram from the shape check alone (`telegram_shape.py`), so a
real update it refused would be a message lost: Telegram would send it again and again and
never get a 200. Updates drawn from the Bot API spec (tests/fakes/telegram_spec.py), every
field of its documented type, with the fields the handlers read and the update kinds the bot
gets, must all pass; python-telegram-bot must read each of them too, and each must have a
conversation to be replayed in."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from adapters.telegram import shape as telegram_shape
from adapters.telegram import updates
from tests.adapters.hostile.real_payloads import TYPES, conforms
from tests.adapters.hostile.send import PROPERTY

# The optional fields drawn, by type: those the shape check looks at. Others get none.
OPTIONAL = {
    "Update": [
        "message",
        "edited_message",
        "channel_post",
        "edited_channel_post",
        "callback_query",
        "my_chat_member",
    ],
    "Message": [
        "from",
        "sender_chat",
        "message_thread_id",
        "is_topic_message",
        "text",
        "entities",
        "caption",
        "caption_entities",
        "photo",
        "document",
        "audio",
        "voice",
        "video",
        "video_note",
        "animation",
        "quote",
        "external_reply",
        "reply_to_message",
    ],
    "CallbackQuery": ["message", "data"],
    "User": ["last_name", "username"],
    "Chat": ["title", "username", "is_forum"],
}
_drawn: dict[tuple[str, int], st.SearchStrategy[Any]] = {}


def value(types: list[str], depth: int, name: str = "") -> st.SearchStrategy[Any]:
    """A value of one of the Bot API `types` (a date one Telegram could send: Unix time)."""
    choices: list[st.SearchStrategy[Any]] = []
    for kind in types:
        if kind.startswith("Array of "):
            choices.append(st.lists(value([kind[9:]], depth), max_size=2))
        elif kind == "Integer" and name.endswith("date"):
            choices.append(st.integers(0, 2**32))
        elif kind == "Integer":
            choices.append(st.integers(-(2**40), 2**40))
        elif kind == "Float":
            choices.append(st.floats(allow_nan=False, allow_infinity=False))
        elif kind == "String":
            choices.append(st.text(max_size=8))
        elif kind == "Boolean":
            choices.append(st.booleans())
        elif kind == "True":
            choices.append(st.just(True))
        else:
            choices.append(obj(kind, depth))
    return st.one_of(choices)


def obj(kind: str, depth: int) -> st.SearchStrategy[Any]:
    """An object of Bot API type `kind`: its required fields, and some of OPTIONAL's (a
    message replied to is one level down, and replies to nothing itself)."""
    key = (kind, depth)
    if key not in _drawn:
        spec = TYPES[kind]
        if "subtypes" in spec:
            _drawn[key] = st.one_of([obj(sub, depth) for sub in spec["subtypes"]])
        else:
            fields = {f["name"]: f for f in spec.get("fields", [])}
            required = {n: value(f["types"], depth, n) for n, f in fields.items() if f["required"]}
            optional = [n for n in OPTIONAL.get(kind, []) if n in fields]
            if depth == 0:
                optional = [n for n in optional if n != "reply_to_message"]
            names = st.lists(st.sampled_from(optional), max_size=4, unique=True)
            _drawn[key] = st.builds(
                lambda base, more: base | more,
                st.fixed_dictionaries(required),
                (names if optional else st.just([])).flatmap(
                    lambda chosen: st.fixed_dictionaries(
                        {n: value(fields[n]["types"], depth - 1, n) for n in chosen}
                    )
                ),
            )
    return _drawn[key]


@PROPERTY
@given(update=obj("Update", 2))
def test_every_update_of_the_documented_types_passes_the_door(update: dict[str, Any]) -> None:
    assert conforms(update, ["Update"]), "the strategy draws only what the spec allows"
    assert telegram_shape.problem(update) is None
    assert not isinstance(updates.parse_update(update, None), str), "and PTB reads it"
    where = telegram_shape.place(update)
    first = next((k for k in telegram_shape.CONVERSATION_KEYS if k in update), None)
    if first is not None and first != "callback_query":
        assert where.startswith(f"{update[first]['chat']['id']}:"), "the message's chat"
