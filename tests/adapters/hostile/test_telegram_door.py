"""Hostile input at `POST /telegram/{workspace}`, as the internet sends it: bodies that are
not JSON, JSON that is no Telegram update, real updates with fields of the wrong type, random
headers and content types, with the right secret and without.

Whatever arrives: never a 5xx, never an unhandled exception in the server, never an operator
prompt from a body that is not a real operator message, and the door still works for the next
real event. Bad input gets a 4xx (400 when the body cannot be parsed) and one log line saying
what was wrong. A good update the store fails to take still gets a 5xx, so the platform sends
it again. Real payload shapes come from the Bot API spec (tests/adapters/real_payloads.py)."""

from __future__ import annotations

import json
import logging
from typing import Any

import aiohttp
import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from adapters.server.app import App
from tests.adapters.hostile.real_payloads import (
    ALICE_TG,
    OPERATOR,
    STRANGER,
    TYPES,
    callback_query,
    channel_post,
    edited_message,
    my_chat_member,
    photo_message,
    text_message,
    tg_message,
)
from tests.adapters.hostile.send import (
    PROPERTY,
    TG_SECRET,
    content_types,
    extra_headers,
    header_text,
    intake_fails,
    json_values,
    mutated,
    post_telegram,
    prompts,
    refusals,
    server_errors,
)
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until
from tests.topology import Topology

# -- examples: Telegram -----------------------------------------------------------------------

TELEGRAM_BAD: list[tuple[str, bytes | str, str]] = [
    # name, body, what the refusal says
    ("not JSON", "hello there", "not JSON"),
    ("broken JSON", '{"update_id": 1,', "not JSON"),
    ("not UTF-8", b'{"update_id": 1, "x": "\xff"}', "not JSON"),
    ("empty body", "", "not JSON"),
    ("JSON array", "[1, 2]", "a list"),
    ("JSON array of an update", json.dumps([{"update_id": 1}]), "a list"),
    ("JSON null", "null", "null"),
    ("JSON number", "5", "a number"),
    ("wrong types", json.dumps({"update_id": "x", "message": 5}), "update_id"),
    ("no update_id", json.dumps({"message": {"message_id": 1}}), "update_id"),
    ("update_id a boolean", json.dumps({"update_id": True}), "update_id"),
    ("message a number", json.dumps({"update_id": 1, "message": 5}), "not a Telegram update"),
    (
        "chat a string",
        json.dumps({"update_id": 2, "message": {"message_id": 1, "date": 0, "chat": "x"}}),
        "not a Telegram update",
    ),
    (
        "date a string",
        json.dumps({"update_id": 3, "message": tg_message("hi") | {"date": "today"}}),
        "not a Telegram update",
    ),
    (
        "no chat",
        json.dumps({"update_id": 4, "message": {"message_id": 1, "date": 0}}),
        "`message.chat` is missing",
    ),
    (
        "operator text a number",
        json.dumps({"update_id": 5, "message": tg_message("hi") | {"text": 5}}),
        "message.text",
    ),
    (
        "ids as strings",
        json.dumps(
            {
                "update_id": 6,
                "message": tg_message("hi")
                | {"chat": {"id": "b", "type": "private"}, "from": ALICE_TG | {"id": "1001"}},
            }
        ),
        "message.chat.id",
    ),
    (
        "topic id a string",
        json.dumps({"update_id": 7, "message": tg_message("hi") | {"message_thread_id": "7"}}),
        "message_thread_id",
    ),
    (
        "sender name a list",
        json.dumps({"update_id": 8, "message": tg_message("hi", ALICE_TG | {"first_name": ["A"]})}),
        "first_name",
    ),
    (
        "entities a string",
        json.dumps({"update_id": 9, "message": tg_message("hi") | {"entities": "bold"}}),
        "not a Telegram update",
    ),
    (
        "callback with a number message",
        json.dumps(
            {
                "update_id": 10,
                "callback_query": {
                    "id": "1",
                    "from": ALICE_TG,
                    "chat_instance": "x",
                    "data": "stop",
                    "message": 5,
                },
            }
        ),
        "not a Telegram update",
    ),
    (
        "callback data a number",
        json.dumps(
            callback_query() | {"callback_query": callback_query()["callback_query"] | {"data": 1}}
        ),
        "callback_query.data",
    ),
]


async def test_telegram_refuses_each_bad_body_with_400_and_keeps_working(
    telegram_app: App,
    telegram_api: FakeTelegram,
    http: aiohttp.ClientSession,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    for n, (name, body, reason) in enumerate(TELEGRAM_BAD, 1):
        for content_type in ("application/json", "text/plain", None):
            seen = len(caplog.records)
            answer = await post_telegram(http, telegram_app, body, content_type=content_type)
            assert answer[0] == 400 and reason in answer[1], (name, answer)
            await until(lambda: bool(refusals(caplog.records[seen:])))  # noqa: B023
            [line] = refusals(caplog.records[seen:])
            assert getattr(line, "reason", "") == answer[1] and line.exc_info is None
            assert server_errors(caplog.records) == [], name
        # without the secret, the same body is refused before anything reads it
        assert (await post_telegram(http, telegram_app, body, secret=None))[0] == 403, name
        real = text_message(f"still there after {name}?")
        assert await post_telegram(http, telegram_app, json.dumps(real)) == (200, "ok"), name
        assert len(await prompts(telegram_app, at_least=n)) == n, (
            "only the real operator messages are prompts"
        )


async def test_telegram_secret_header_garbage_is_403_not_500(
    telegram_app: App, http: aiohttp.ClientSession, caplog: pytest.LogCaptureFixture
) -> None:
    body = json.dumps(text_message("let me in"))
    for secret in ("", "s3cre", "s3cret\t!", "s\u00e9cret", "\u2603" * 300, TG_SECRET * 2):
        assert (await post_telegram(http, telegram_app, body, secret=secret))[0] == 403
    assert server_errors(caplog.records) == []
    assert await prompts(telegram_app) == []


async def test_telegram_real_updates_that_are_no_prompt_are_acknowledged_and_ignored(
    telegram_app: App,
    telegram_api: FakeTelegram,
    http: aiohttp.ClientSession,
    caplog: pytest.LogCaptureFixture,
) -> None:
    for real in (
        edited_message(),
        channel_post(),
        my_chat_member("member", "kicked"),  # the operator blocked the bot
        my_chat_member("left", "member"),
        callback_query(inaccessible=True),
        callback_query(),  # Stop when nothing runs: the /stop command
        text_message("hello", {"id": STRANGER, "is_bot": False, "first_name": "Eve"}),
    ):
        assert await post_telegram(http, telegram_app, json.dumps(real)) == (200, "ok"), real
    assert await prompts(telegram_app) == []
    await until(lambda: bool(telegram_api.sent("answerCallbackQuery")))  # the Stop click
    assert (await post_telegram(http, telegram_app, json.dumps(text_message("go"))))[0] == 200
    assert await prompts(telegram_app, at_least=1) == ["go"]
    # a photo with a caption: the caption is a prompt, and what became of the photo is said
    # (this one is unknown to the Bot API, so getFile refuses it)
    assert await post_telegram(http, telegram_app, json.dumps(photo_message())) == (200, "ok")
    await until(lambda: any("photo.jpg (it could not" in m["text"] for m in telegram_api.sent()))
    assert await prompts(telegram_app, at_least=2) == ["go", "see this"]
    assert server_errors(caplog.records) == [] and refusals(caplog.records) == []


# Where the door stores in this process (inline: the inbox file; replicas: the shared
# table), an intake that fails is a 500 and Telegram's resend lands; the door process's own
# inbox failing is tests/adapters/doors/. A bridge that fails to take a stored update has it
# handed over again from the intake.
@pytest.mark.parametrize("topology", ["inline", "replicas"], indirect=True)
async def test_telegram_update_the_intake_fails_to_take_is_a_5xx_and_the_retry_lands(
    telegram_app: App,
    topology: Topology,
    http: aiohttp.ClientSession,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    body = json.dumps(text_message("store me"))

    with monkeypatch.context() as patch:
        intake_fails(patch)
        assert (await post_telegram(http, telegram_app, body))[0] == 500
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == [
        "request not stored"
    ]
    assert await prompts(telegram_app) == []
    receive = topology.active.bridge.receive
    failures = ["database is locked"]

    async def database_down_once(chat: Any) -> Any:
        if failures:
            raise OSError(failures.pop())
        return await receive(chat)

    monkeypatch.setattr(topology.active.bridge, "receive", database_down_once)
    assert await post_telegram(http, telegram_app, body) == (200, "ok"), "Telegram's resend lands"
    assert await prompts(telegram_app, at_least=1) == ["store me"]
    assert failures == [], "the bridge failed once, and the update was handed over again"


# Telegram: Update-like objects drawn from the Bot API spec, each field sometimes of a wrong type
FOCUS = {
    "Update": ["message", "callback_query", "edited_message", "channel_post", "my_chat_member"],
    "Message": ["from", "text", "message_thread_id", "is_topic_message", "photo", "sticker"],
    "CallbackQuery": ["message", "data"],
}
not_the_operator = st.integers(-(2**40), 2**40).filter(lambda n: n != OPERATOR)
_objects: dict[tuple[str, int], st.SearchStrategy[Any]] = {}


def tg_value(types: list[str], depth: int) -> st.SearchStrategy[Any]:
    right: list[st.SearchStrategy[Any]] = []
    for kind in types:
        if kind.startswith("Array of "):
            right.append(st.lists(tg_value([kind[9:]], depth), max_size=2))
        elif kind == "Integer":
            right.append(not_the_operator)
        elif kind == "String":
            right.append(st.sampled_from(["stop", "private", "group", "hi"]) | st.text(max_size=8))
        elif kind in ("Boolean", "True"):
            right.append(st.booleans())
        elif kind == "Float":
            right.append(st.floats(allow_nan=False))
        elif kind in TYPES and depth > 0:
            right.append(tg_object(kind, depth - 1))
    right = right or [st.none()]
    return st.one_of(*right, *right, *right, json_values)  # mostly right, sometimes anything


def tg_object(kind: str, depth: int) -> st.SearchStrategy[Any]:
    key = (kind, depth)
    if key not in _objects:
        spec = TYPES[kind]
        if "subtypes" in spec:
            _objects[key] = st.one_of([tg_object(sub, depth) for sub in spec["subtypes"]])
        else:
            fields = {f["name"]: f for f in spec.get("fields", [])}
            required = {n: tg_value(f["types"], depth) for n, f in fields.items() if f["required"]}
            optional = FOCUS.get(kind) or sorted(n for n, f in fields.items() if not f["required"])
            more = (
                st.lists(st.sampled_from(optional), max_size=2, unique=True)
                if optional
                else st.just([])
            )
            _objects[key] = st.builds(
                lambda base, more: base | more,
                st.fixed_dictionaries(required),
                more.flatmap(
                    lambda names: st.fixed_dictionaries(
                        {n: tg_value(fields[n]["types"], depth) for n in names}
                    )
                ),
            )
    return _objects[key]


STRANGER_TG = {"id": STRANGER, "is_bot": False, "first_name": "Eve"}
TG_REALS = [
    text_message("hello", STRANGER_TG),
    callback_query(STRANGER_TG),
    edited_message(),
    channel_post(),
    my_chat_member(),
]
TG_KEYS = ["update_id", "message", "callback_query", "chat", "from", "id", "text", "data",
           "message_id", "message_thread_id", "is_topic_message", "date", "first_name"]  # fmt: skip
tg_mutants = mutated(TG_REALS, TG_KEYS)
TELEGRAM_BODIES: dict[str, st.SearchStrategy[bytes]] = {
    "real update, fields changed": tg_mutants.map(lambda p: json.dumps(p).encode()),
    "Update from the spec, some types wrong": tg_object("Update", 3).map(
        lambda p: json.dumps(p).encode()
    ),
    "JSON": json_values.map(lambda p: json.dumps(p).encode()),
    "bytes": st.binary(max_size=200),
    "text": st.text(max_size=200).map(str.encode),
}


@PROPERTY
@given(
    kind=st.sampled_from(sorted(TELEGRAM_BODIES)),
    data=st.data(),
    content_type=content_types,
    secret=st.sampled_from([TG_SECRET, TG_SECRET, TG_SECRET, None]) | header_text,
    headers=extra_headers,
)
async def test_telegram_any_body_any_headers_never_5xx_never_a_prompt(
    telegram_app: App,
    http: aiohttp.ClientSession,
    caplog: pytest.LogCaptureFixture,
    kind: str,
    data: st.DataObject,
    content_type: str | None,
    secret: str | None,
    headers: dict[str, str],
) -> None:
    body = data.draw(TELEGRAM_BODIES[kind], label="body")
    seen = len(caplog.records)
    status, answer = await post_telegram(
        http, telegram_app, body, content_type=content_type, secret=secret, headers=headers
    )
    event(f"{'right' if secret == TG_SECRET else 'wrong'} secret, {kind}: {status}")
    assert status < 500, answer
    if secret != TG_SECRET:
        assert status == 403, answer
    assert status in (200, 400, 403), answer
    assert server_errors(caplog.records[seen:]) == []
    assert await prompts(telegram_app) == []
