"""Hostile input at `POST /slack/events`, as the internet sends it: bodies that are not JSON,
JSON that is no Slack payload, real payloads with fields of the wrong type, random headers and
content types, with a valid signature and without.

Whatever arrives: never a 5xx, never an unhandled exception in the server, never an operator
prompt from a body that is not a real operator message, and the door still works for the next
real event. Bad input gets a 4xx (400 when the body cannot be parsed) and one log line saying
what was wrong. A good update the store fails to take still gets a 5xx, so the platform sends
it again. Real payload shapes come from slack-bolt's test fixtures (real_payloads.py)."""

from __future__ import annotations

import json
import logging
from typing import Any
from urllib.parse import urlencode

import aiohttp
import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from adapters.server.app import App
from tests.adapters.hostile.real_payloads import (
    block_actions,
    bot_message,
    classic_bot_message,
    envelope,
    file_share,
    form,
    message_changed,
    message_deleted,
)
from tests.adapters.hostile.send import (
    PROPERTY,
    content_types,
    extra_headers,
    header_text,
    intake_fails,
    json_values,
    mutated,
    post_slack,
    prompts,
    refusals,
    server_errors,
    slack_signature,
)
from tests.adapters.slack_harness import ALICE, MALLORY, OPS, SlackSide
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.slack_api import FakeSlack
from tests.runtime.helpers import until
from tests.topology import Topology

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
    # signed and well formed, but nothing takes it: acknowledged on every topology (the door
    # process cannot know what bolt would take; a 404 would only make Slack send it again)
    ("unknown type (well formed)", "application/json", '{"type": "wat", "team_id": "T1"}', 200),
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
            await until(lambda: bool(refusals(caplog.records[seen:])))  # noqa: B023
            [line] = refusals(caplog.records[seen:])
            reason = getattr(line, "reason", "")
            assert reason and line.exc_info is None, "what was wrong, and no traceback"
            assert json.loads(answer[1])["reason"] == reason
        assert server_errors(caplog.records) == [], name
        # unsigned, the same body is refused before anything reads it
        unsigned = await post_slack(http, slack_app, body, content_type=content_type, signed=False)
        assert unsigned[0] == 401, name
        await slack.say(f"still there after {name}?")
        assert len(await prompts(slack_app, at_least=n)) == n, (
            "only the real operator messages are prompts"
        )


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
    assert await prompts(slack_app, at_least=1) == ["still there?"]


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
    # a file shared by the operator is an operator message, once its files were fetched (this
    # one is not on the configured Slack's host: the token is not sent there, and it is said)
    assert (await post_slack(http, slack_app, json.dumps(file_share(slack))))[0] == 200
    said = "file.png (it could not be downloaded: it is served from https://files.slack.com,"
    await until(lambda: any(said in p["text"] for p in slack.fake.posts("DALICE")))
    assert await prompts(slack_app, at_least=1) == ["here is the log"]
    assert server_errors(caplog.records) == [] and refusals(caplog.records) == []
    await until(lambda: bool(anthropic_api.requests))
    assert anthropic_api.requests[0]["messages"][0]["content"][0]["text"] == "here is the log"


# Where the door stores in this process (inline, replicas), an intake that fails is a 500 and
# Slack's retry lands; a bridge that fails to take a stored event has it handed over again.
@pytest.mark.parametrize("topology", ["inline", "replicas"], indirect=True)
async def test_slack_event_the_intake_fails_to_take_is_a_5xx_and_the_retry_lands(
    slack_app: App, topology: Topology, slack_api: FakeSlack, monkeypatch: pytest.MonkeyPatch
) -> None:
    slack = SlackSide(slack_app, slack_api)
    body = slack.envelope("T1", slack.message("store me"))

    with monkeypatch.context() as patch:
        intake_fails(patch)
        assert (await slack.post(body)).status == 500
    assert await prompts(slack_app) == []
    receive = topology.active.bridge.receive
    failures = ["database is locked"]

    async def database_down_once(chat: Any) -> Any:
        if failures:
            raise OSError(failures.pop())
        return await receive(chat)

    monkeypatch.setattr(topology.active.bridge, "receive", database_down_once)
    assert (await slack.post(body, retry=1)).status == 200
    assert await prompts(slack_app, at_least=1) == ["store me"]
    assert failures == [], "the bridge failed once, and the event was handed over again"


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
