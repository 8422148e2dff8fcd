"""Hostile input at the two public HTTP doors, `POST /slack/events` and
`POST /telegram/{workspace}`, as the internet sends it: bodies that are not JSON, JSON that is
no Slack or Telegram payload, real payloads with fields of the wrong type, random headers and
content types, with a valid signature (or secret) and without.

Whatever arrives: never a 5xx, never an unhandled exception in the server, never an operator
prompt from a body that is not a real operator message, and the door still works for the next
real event. Bad input gets a 4xx (400 when the body cannot be parsed) and one log line saying
what was wrong. A good update the store fails to take still gets a 5xx, so the platform sends
it again. Real payload shapes come from slack-bolt's test fixtures and the Bot API spec."""

from __future__ import annotations

import copy
import hashlib
import hmac
import json
import logging
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import aiohttp
import jsonschema
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from adapters.app import App
from runtime import MessageKind
from tests.adapters import slack_harness, telegram_harness
from tests.adapters.slack_harness import ACME_SECRET, ALICE, MALLORY, OPS, WRAPPER_SCHEMA, SlackSide
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import SPEC, FakeTelegram
from tests.runtime.helpers import until

TG_SECRET = "s3cret"
TG_HEADER = "X-Telegram-Bot-Api-Secret-Token"
OPERATOR = 1001  # alice's Telegram id
STRANGER = 666
PROPERTY = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


# -- starting the doors ----------------------------------------------------------------------


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


@pytest.fixture(autouse=True)
def _quick_stop(monkeypatch: pytest.MonkeyPatch) -> None:
    """The model's answers to the many checks that the door still works queue up behind the
    platforms' pacing; a test need not wait for them to go out when it stops the app."""
    monkeypatch.setattr("adapters.app.DRAIN_S", 0.1)


@pytest.fixture
async def slack_app(
    db_path: Path, anthropic_api: FakeAnthropic, slack_api: FakeSlack
) -> AsyncIterator[App]:
    app = await slack_harness.start_app(db_path, anthropic_api, slack_api)
    yield app
    await app.stop()


@pytest.fixture
async def telegram_app(
    db_path: Path, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> AsyncIterator[App]:
    app = await telegram_harness.start_app(
        db_path,
        anthropic_api,
        telegram_api,
        telegram_extra=f'mode = "webhook"\n  webhook_secret = "{TG_SECRET}"',
    )
    yield app
    await app.stop()


def slack_signature(body: bytes, timestamp: str, secret: str = ACME_SECRET) -> str:
    base = b"v0:" + timestamp.encode() + b":" + body
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


async def post_slack(
    http: aiohttp.ClientSession,
    app: App,
    body: bytes | str,
    *,
    content_type: str | None = "application/json",
    signed: bool = True,
    headers: dict[str, str] | None = None,
) -> tuple[int, str]:
    raw = body.encode() if isinstance(body, str) else body
    sent: dict[str, str] = {}
    if content_type is not None:
        sent["Content-Type"] = content_type
    if signed:
        timestamp = str(int(time.time()))
        sent["X-Slack-Request-Timestamp"] = timestamp
        sent["X-Slack-Signature"] = slack_signature(raw, timestamp)
    sent |= headers or {}
    url = f"http://127.0.0.1:{app.port}/slack/events"
    async with http.post(url, data=raw, headers=sent) as response:
        return response.status, await response.text()


async def post_telegram(
    http: aiohttp.ClientSession,
    app: App,
    body: bytes | str,
    *,
    content_type: str | None = "application/json",
    secret: str | None = TG_SECRET,
    headers: dict[str, str] | None = None,
) -> tuple[int, str]:
    raw = body.encode() if isinstance(body, str) else body
    sent: dict[str, str] = {}
    if content_type is not None:
        sent["Content-Type"] = content_type
    if secret is not None:
        sent[TG_HEADER] = secret
    sent |= headers or {}
    url = f"http://127.0.0.1:{app.port}/telegram/acme"
    async with http.post(url, data=raw, headers=sent) as response:
        return response.status, await response.text()


async def prompts(app: App) -> list[str | None]:
    """The texts of every operator prompt that reached the store (and so the model)."""
    return [
        entry.message.text
        for entry in await app.runtime.store.messages()
        if entry.message.kind is MessageKind.OPERATOR_PROMPT
    ]


def server_errors(records: list[logging.LogRecord]) -> list[str]:
    """Unhandled exceptions (aiohttp's "Error handling request") and any other error lines,
    but for clients of an earlier test's event loop that the garbage collector closes now."""
    return [
        f"{r.name}: {r.getMessage()}"
        for r in records
        if (r.levelno >= logging.ERROR or "Error handling request" in r.getMessage())
        and "Event loop is closed" not in str(r.exc_info and r.exc_info[1]) + r.getMessage()
    ]


def refusals(records: list[logging.LogRecord]) -> list[logging.LogRecord]:
    return [
        r for r in records if r.getMessage() in ("slack request refused", "telegram update refused")
    ]


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


# -- examples: Slack --------------------------------------------------------------------------

MESSAGE_EVENT = {
    "type": "message",
    "user": ALICE,
    "channel": "DALICE",
    "ts": "1.2",
    "event_ts": "1.2",
    "text": "hi",
    "channel_type": "im",
}
SLACK_BAD: list[tuple[str, str, str, int]] = [
    # name, content type, body, status
    ("not JSON", "application/json", "hello there", 400),
    ("broken JSON object", "application/json", '{"type": "event_callback",', 400),
    ("JSON array", "application/json", "[1, 2]", 400),
    ("JSON array of an envelope", "application/json", json.dumps([envelope(MESSAGE_EVENT)]), 400),
    ("JSON string", "application/json", '"event_callback"', 400),
    ("JSON null", "application/json", "null", 400),
    ("empty body", "application/json", "", 400),
    ("plain text", "text/plain", "hello there", 400),
    ("form garbage", "application/x-www-form-urlencoded", "a=%zz&&==b&payload", 400),
    ("form without payload", "application/x-www-form-urlencoded", "foo=bar&baz=1", 400),
    ("payload= not JSON", "application/x-www-form-urlencoded", "payload=%7Bnope", 400),
    ("payload= a JSON list", "application/x-www-form-urlencoded", "payload=%5B1%5D", 400),
    (
        "envelope without event",
        "application/json",
        '{"type": "event_callback", "team_id": "T1"}',
        400,
    ),
    (
        "event that is a list",
        "application/json",
        json.dumps({"type": "event_callback", "team_id": "T1", "event": ["type"]}),
        400,
    ),
    (
        "message event with number fields",
        "application/json",
        json.dumps(envelope(MESSAGE_EVENT) | {"event": MESSAGE_EVENT | {"channel": 7, "ts": 1}}),
        400,
    ),
    (
        "operator message in a channel object",
        "application/json",
        json.dumps(envelope(MESSAGE_EVENT) | {"event": MESSAGE_EVENT | {"channel": {"id": "D1"}}}),
        400,
    ),
    (
        "authorizations that is a string",
        "application/json",
        json.dumps(envelope(MESSAGE_EVENT) | {"authorizations": "T1"}),
        400,
    ),
    (
        "team that is a number",
        "application/json",
        json.dumps(envelope(MESSAGE_EVENT) | {"team_id": 5}),
        400,
    ),
    (
        "no team at all",
        "application/json",
        json.dumps({"type": "event_callback", "event": MESSAGE_EVENT}),
        400,
    ),
    (
        "block_actions with actions a string",
        "application/x-www-form-urlencoded",
        form(block_actions() | {"actions": "switchboard_stop"}),
        400,
    ),
    (
        "block_actions without actions",
        "application/x-www-form-urlencoded",
        form(block_actions() | {"actions": []}),
        400,
    ),
    (
        "Stop click with a channel string",
        "application/x-www-form-urlencoded",
        form(block_actions() | {"channel": "DALICE"}),
        400,
    ),
    (
        "Stop click on a message whose ts is a number",
        "application/x-www-form-urlencoded",
        form(block_actions() | {"message": {"ts": 3}}),
        400,
    ),
    (  # bolt would post an apology to the response_url: a request to a URL from the body
        "Stop click of no team, with a response_url",
        "application/x-www-form-urlencoded",
        form(block_actions() | {"team": None, "user": {"id": MALLORY}}),
        400,
    ),
    ("unknown type (well formed)", "application/json", '{"type": "wat", "team_id": "T1"}', 404),
]


async def test_slack_refuses_each_signed_bad_body_with_4xx_and_keeps_working(
    slack_app: App,
    slack_api: FakeSlack,
    http: aiohttp.ClientSession,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    slack = SlackSide(slack_app, slack_api)
    for n, (name, content_type, body, status) in enumerate(SLACK_BAD, 1):
        seen = len(caplog.records)
        answer = await post_slack(http, slack_app, body, content_type=content_type)
        assert answer[0] == status, (name, answer)
        if status == 400:
            [line] = refusals(caplog.records[seen:])
            reason = getattr(line, "reason", "")
            assert reason and line.exc_info is None, "what was wrong, and no traceback"
            assert json.loads(answer[1])["reason"] == reason
        assert server_errors(caplog.records) == [], name
        # unsigned, the same body is refused before anything reads it
        unsigned = await post_slack(http, slack_app, body, content_type=content_type, signed=False)
        assert unsigned[0] == 401, name
        await slack.say(f"still there after {name}?")
        assert len(await prompts(slack_app)) == n, "only the real operator messages are prompts"


async def test_slack_refuses_a_body_that_is_not_utf8(
    slack_app: App,
    slack_api: FakeSlack,
    http: aiohttp.ClientSession,
    caplog: pytest.LogCaptureFixture,
) -> None:
    body = b'{"type": "event_callback", "text": "\xff\xfe"}'
    for signed in (True, False):
        status, answer = await post_slack(http, slack_app, body, signed=signed)
        assert status == 400 and "UTF-8" in answer
    assert server_errors(caplog.records) == []
    await SlackSide(slack_app, slack_api).say("still there?")
    assert await prompts(slack_app) == ["still there?"]


async def test_slack_header_garbage_is_401_not_500(
    slack_app: App, http: aiohttp.ClientSession, caplog: pytest.LogCaptureFixture
) -> None:
    body = json.dumps(envelope(MESSAGE_EVENT))
    for timestamp in ("yesterday", "1e9", "9" * 5000, "\u00e9t\u00e9", ""):
        headers = {"X-Slack-Request-Timestamp": timestamp, "X-Slack-Signature": "v0=00"}
        assert (await post_slack(http, slack_app, body, signed=False, headers=headers))[0] == 401
    assert server_errors(caplog.records) == []


async def test_slack_real_payloads_that_are_no_prompt_are_acknowledged_and_ignored(
    slack_app: App,
    slack_api: FakeSlack,
    anthropic_api: FakeAnthropic,
    http: aiohttp.ClientSession,
    caplog: pytest.LogCaptureFixture,
) -> None:
    slack = SlackSide(slack_app, slack_api)
    for payload in (
        message_changed(),
        message_deleted(),
        bot_message(),
        classic_bot_message(),
        message_changed(user=MALLORY, channel=OPS),
    ):
        assert (await post_slack(http, slack_app, json.dumps(payload)))[0] == 200, payload
    url_check = {"token": "t", "challenge": "c-123", "type": "url_verification"}
    assert await post_slack(http, slack_app, json.dumps(url_check)) == (
        200,
        '{"challenge": "c-123"}',
    )
    ssl_check = "ssl_check=1&token=verification-token"
    ssl = await post_slack(
        http, slack_app, ssl_check, content_type="application/x-www-form-urlencoded"
    )
    assert ssl == (200, "")
    # a click on Stop when nothing runs is the /stop command, answered, and no prompt
    click = await post_slack(
        http, slack_app, form(block_actions()), content_type="application/x-www-form-urlencoded"
    )
    assert click[0] == 200
    assert await prompts(slack_app) == []
    # a file shared by the operator is an operator message
    assert (await post_slack(http, slack_app, json.dumps(file_share(slack))))[0] == 200
    assert await prompts(slack_app) == ["here is the log"]
    assert server_errors(caplog.records) == [] and refusals(caplog.records) == []
    await until(lambda: bool(anthropic_api.requests))
    assert anthropic_api.requests[0]["messages"][0]["content"][0]["text"] == "here is the log"


async def test_slack_event_the_store_fails_to_take_is_a_5xx_and_the_retry_lands(
    slack_app: App, slack_api: FakeSlack, monkeypatch: pytest.MonkeyPatch
) -> None:
    slack = SlackSide(slack_app, slack_api)
    body = slack.envelope("T1", slack.message("store me"))

    async def database_down(chat: Any) -> Any:
        raise OSError("disk I/O error")

    with monkeypatch.context() as patch:
        patch.setattr(slack_app.bridge, "receive", database_down)
        assert (await slack.post(body)).status == 500
    assert await prompts(slack_app) == []
    assert (await slack.post(body, retry=1)).status == 200
    assert await prompts(slack_app) == ["store me"]


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
        "message.chat.id",
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
            [line] = refusals(caplog.records[seen:])
            assert getattr(line, "reason", "") == answer[1] and line.exc_info is None
            assert server_errors(caplog.records) == [], name
        # without the secret, the same body is refused before anything reads it
        assert (await post_telegram(http, telegram_app, body, secret=None))[0] == 403, name
        real = text_message(f"still there after {name}?")
        assert await post_telegram(http, telegram_app, json.dumps(real)) == (200, "ok"), name
        assert len(await prompts(telegram_app)) == n, "only the real operator messages are prompts"


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
        photo_message(),  # the operator sends a photo: told that only text is read
        text_message("hello", {"id": STRANGER, "is_bot": False, "first_name": "Eve"}),
    ):
        assert await post_telegram(http, telegram_app, json.dumps(real)) == (200, "ok"), real
    assert await prompts(telegram_app) == []
    assert telegram_api.sent("answerCallbackQuery"), "the Stop click is answered"
    assert (await post_telegram(http, telegram_app, json.dumps(text_message("go"))))[0] == 200
    assert await prompts(telegram_app) == ["go"]
    assert server_errors(caplog.records) == [] and refusals(caplog.records) == []


async def test_telegram_update_the_store_fails_to_take_is_a_5xx_and_the_retry_lands(
    telegram_app: App,
    http: aiohttp.ClientSession,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    body = json.dumps(text_message("store me"))

    async def database_down(chat: Any) -> Any:
        raise OSError("disk I/O error")

    with monkeypatch.context() as patch:
        patch.setattr(telegram_app.bridge, "receive", database_down)
        assert (await post_telegram(http, telegram_app, body))[0] == 500
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == [
        "telegram update not stored"
    ]
    assert await prompts(telegram_app) == []
    assert await post_telegram(http, telegram_app, body) == (200, "ok"), "Telegram's resend lands"
    assert await prompts(telegram_app) == ["store me"]


# -- properties -------------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=10,
)
header_text = st.text(
    st.characters(min_codepoint=0x20, max_codepoint=0x2FF, exclude_characters="\x7f"), max_size=30
)
extra_headers = st.dictionaries(
    st.from_regex(r"X-[A-Za-z0-9-]{1,12}", fullmatch=True), header_text, max_size=3
)
content_types = st.one_of(
    st.none(),
    st.sampled_from(
        [
            "application/json",
            "application/json; charset=utf-8",
            "application/x-www-form-urlencoded",
            "text/plain",
            "multipart/form-data; boundary=x",
            "application/octet-stream",
        ]
    ),
    header_text,
)


def mutated(reals: list[Any], keys: list[str]) -> st.SearchStrategy[Any]:
    """A real payload with a few fields, at any depth, replaced by random JSON or removed."""

    @st.composite
    def build(draw: st.DrawFn) -> Any:
        payload = copy.deepcopy(draw(st.sampled_from(reals)))
        for _ in range(draw(st.integers(0, 3))):  # 0: the real payload as it is
            node = payload
            while True:
                inner = sorted(k for k, v in node.items() if isinstance(v, dict))
                if not inner or draw(st.booleans()):
                    break
                node = node[draw(st.sampled_from(inner))]
            key = draw(st.sampled_from(sorted(node) + keys))
            if draw(st.booleans()):
                node[key] = draw(json_values)
            else:
                node.pop(key, None)
        return payload

    return build()


# Slack: the fields bolt and our listeners read, with values of every type
SLACK_KEYS = [
    "type", "subtype", "team", "team_id", "enterprise", "enterprise_id", "user", "user_id",
    "channel", "channel_id", "event", "message", "previous_message", "item", "assistant_thread",
    "authorizations", "actions", "response_urls", "response_url", "view", "function_data",
    "ts", "thread_ts", "event_ts", "event_id", "text", "channel_type", "bot_id", "files",
    "challenge", "ssl_check", "command", "is_ext_shared_channel", "user_team", "callback_id",
    "action_id", "function_execution_id",
]  # fmt: skip
slack_words = st.sampled_from(
    ["event_callback", "message", "app_mention", "block_actions", "url_verification",
     "interactive_message", "view_submission", "T1", "T2", "DMALLORY", OPS, MALLORY, "1",
     "1700000000.000100", "switchboard_stop", "message_changed", "file_share", "im"]
)  # fmt: skip
slack_shapes = st.recursive(
    st.dictionaries(st.sampled_from(SLACK_KEYS), slack_words | json_values, max_size=5),
    lambda inner: st.dictionaries(
        st.sampled_from(SLACK_KEYS),
        slack_words | json_values | inner | st.lists(inner, max_size=2),
        max_size=6,
    ),
    max_leaves=15,
)
slack_envelopes = st.builds(
    lambda base, rest: base | rest,
    st.fixed_dictionaries(
        {"type": slack_words, "team_id": st.sampled_from(["T1", "T2"])},
        optional={"event": slack_shapes},
    ),
    slack_shapes,
)
SLACK_REALS = [
    envelope(MESSAGE_EVENT | {"user": MALLORY}),
    envelope(MESSAGE_EVENT | {"user": MALLORY, "channel": OPS, "channel_type": "channel"}),
    message_changed(user=MALLORY),
    message_deleted(user=MALLORY),
    bot_message(),
    classic_bot_message(),
    block_actions(user=MALLORY),
]
slack_payloads = st.one_of(json_values, slack_shapes, slack_envelopes)
slack_mutants = mutated(SLACK_REALS, SLACK_KEYS)
SLACK_BODIES: dict[str, st.SearchStrategy[bytes]] = {
    "real payload, fields changed, JSON": slack_mutants.map(lambda p: json.dumps(p).encode()),
    "real payload, fields changed, form": slack_mutants.map(lambda p: form(p).encode()),
    "Slack-like shape, JSON": slack_payloads.map(lambda p: json.dumps(p).encode()),
    "Slack-like shape, form": slack_payloads.map(lambda p: form(p).encode()),
    "form fields": st.dictionaries(st.text(max_size=8), st.text(max_size=20), max_size=4).map(
        lambda fields: urlencode(fields).encode()
    ),
    "bytes": st.binary(max_size=200),
    "text": st.text(max_size=200).map(str.encode),
}


@PROPERTY
@given(
    kind=st.sampled_from(sorted(SLACK_BODIES)),
    data=st.data(),
    content_type=content_types,
    signing=st.sampled_from(["valid", "valid", "valid", "none", "bad timestamp"]),
    headers=extra_headers,
    timestamp=header_text,
)
async def test_slack_any_body_any_headers_never_5xx_never_a_prompt(
    slack_app: App,
    http: aiohttp.ClientSession,
    caplog: pytest.LogCaptureFixture,
    kind: str,
    data: st.DataObject,
    content_type: str | None,
    signing: str,
    headers: dict[str, str],
    timestamp: str,
) -> None:
    body = data.draw(SLACK_BODIES[kind], label="body")
    seen = len(caplog.records)
    if signing == "bad timestamp":
        headers = headers | {
            "X-Slack-Request-Timestamp": timestamp,
            "X-Slack-Signature": slack_signature(body, timestamp),
        }
    status, answer = await post_slack(
        http, slack_app, body, content_type=content_type, signed=signing == "valid", headers=headers
    )
    event(f"{signing} signature, {kind}: {status}")
    assert status < 500, answer
    if signing != "valid":
        assert status in (400, 401), answer
    assert server_errors(caplog.records[seen:]) == []
    assert await prompts(slack_app) == []


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
