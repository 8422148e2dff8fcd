"""The checks every request to `POST /slack/events` passes before it is stored (`door.py`, in
the door process or the main one): signed by a configured workspace's secret, for that
workspace's team, and shaped as Slack sends it.

bolt trusts the shape of what it parses: a body that is not JSON, or a field of a type Slack
never sends, makes it (or one of our listeners) raise, which would answer 500 and have Slack
send the request again. So a signed body is checked here before bolt sees it, and one that is
no Slack request is refused with 400 and a log line saying what is wrong with it."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from slack_bolt.request.internals import extract_content_type, extract_team_id, parse_body
from slack_sdk.signature import SignatureVerifier

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class SlackKey:
    """What checks a workspace's requests: its id, its team, its signing secret."""

    workspace_id: str
    team_id: str
    verifier: SignatureVerifier


@dataclass(frozen=True, slots=True)
class SlackRequest:
    """A checked request: signed by `workspace_id`'s secret and shaped as Slack sends it."""

    workspace_id: str
    team: str | None  # None: Slack's URL or SSL check of the endpoint, which names no team
    text: str
    body: dict[str, Any]

    @property
    def platform_id(self) -> str | None:
        """What names the request once, so a retry is stored once: an event's id, or the
        trigger of a command or a button press."""
        key = self.body.get("event_id") or self.body.get("trigger_id")
        return key if isinstance(key, str) else None

    @property
    def place(self) -> str:
        """The conversation the request belongs to, as `adapters/slack/inbound.py` makes
        sessions of messages (a thread; a DM's top level; a channel message starts its own
        thread), else its channel: requests of one place are handled in the order they came,
        different places side by side."""
        event = self.body.get("event")
        if isinstance(event, dict):
            channel = event.get("channel")
            if isinstance(channel, str):
                direct = event.get("channel_type") == "im" or channel.startswith("D")
                thread = event.get("thread_ts") or (None if direct else event.get("ts"))
                return f"{channel}:{thread or ''}"
        channel = self.body.get("channel_id") or self.body.get("channel")
        if isinstance(channel, dict):
            channel = channel.get("id")
        return str(channel or "")

    def answer_check(self) -> web.Response:
        """Slack's own checks of the endpoint: the URL check echoes its challenge."""
        if self.body.get("type") == "url_verification":
            return web.json_response({"challenge": self.body.get("challenge")})
        return web.Response(status=200)


def check(
    keys: Sequence[SlackKey], raw: bytes, headers: dict[str, str]
) -> SlackRequest | web.Response:
    """The request, checked; or the answer refusing it (401 unsigned, 400 malformed).
    `headers` lower-cased."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return refused(headers, raw, "the body is not UTF-8 text")
    signed = [k for k in keys if _signed(k, text, headers)]
    if not signed:
        return web.json_response({"error": "invalid request"}, status=401)
    content_type = extract_content_type({"content-type": [headers.get("content-type", "")]})
    try:  # as bolt will: JSON, or a form whose `payload` field is JSON
        body = parse_body(text, content_type)
    except ValueError as exc:
        return refused(headers, raw, f"the body does not parse: {exc}")
    except RecursionError:
        return refused(headers, raw, "the body is nested too deeply")
    problem = malformed(body)
    if problem is not None:
        return refused(headers, raw, problem)
    team = extract_team_id(body)  # as bolt finds it (a whole bolt request costs 3 times this)
    if team is None and not _needs_no_team(body):
        return refused(headers, raw, "the body names no Slack team")
    if team is not None:
        signed = [k for k in signed if k.team_id == team]
    if not signed:
        return web.json_response({"error": "invalid request"}, status=401)
    return SlackRequest(signed[0].workspace_id, team, text, body)


# The fields bolt's context extraction and our listeners read, with the types Slack sends them
# as, wherever they appear in the objects walked; any other field passes unchecked.
_STRINGS = frozenset(
    {
        "type",
        "subtype",
        "team_id",
        "user_id",
        "channel_id",
        "enterprise_id",
        "context_team_id",
        "context_enterprise_id",
        "user_team",
        "ts",
        "thread_ts",
        "event_ts",
        "event_id",
        "channel_type",
        "bot_id",
        "challenge",
        "response_url",
        "callback_id",
        "action_id",
        "block_id",
        "action_ts",
        "app_installed_team_id",
        "function_execution_id",
        "bot_access_token",
    }
)
_IDS = frozenset({"team", "enterprise", "user", "channel"})  # a string, or an object with an id
_OBJECTS = frozenset(
    {"event", "message", "previous_message", "item", "assistant_thread", "view", "function_data"}
)
_OBJECT_LISTS = frozenset({"authorizations", "actions", "response_urls"})
# What our listeners read as plain strings: the message events' sender, place and text.
_MESSAGE_STRINGS = ("user", "channel", "text")


def _kind(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}
    return "null" if value is None else names.get(type(value), "a number")


def _malformed_fields(body: dict[str, Any]) -> str | None:
    """The first field of `body` whose type Slack never sends there, as `path is X, not Y`."""
    todo: list[tuple[str, dict[str, Any]]] = [("", body)]
    while todo:
        where, node = todo.pop()
        for key, value in node.items():
            at = f"{where}.{key}" if where else key
            if key in _STRINGS and value is not None and not isinstance(value, str):
                return f"`{at}` is {_kind(value)}, not a string"
            if key in _IDS and value is not None and not isinstance(value, str):
                if not isinstance(value, dict):
                    return f"`{at}` is {_kind(value)}, not a string or an object"
                todo.append((at, value))
            if key in _OBJECTS:
                if not isinstance(value, dict):
                    return f"`{at}` is {_kind(value)}, not an object"
                todo.append((at, value))
            if key in _OBJECT_LISTS:
                if not isinstance(value, list):
                    return f"`{at}` is {_kind(value)}, not a list"
                for i, item in enumerate(value):
                    if not isinstance(item, dict):
                        return f"`{at}[{i}]` is {_kind(item)}, not an object"
                    todo.append((f"{at}[{i}]", item))
    return None


def malformed(body: object) -> str | None:
    """What makes a parsed, signed body something Slack never sends, or None. Only the fields
    that bolt and our listeners read are checked, so payloads of any kind pass."""
    if not isinstance(body, dict):
        return f"the body is {_kind(body)}, not an object"
    if not {"type", "command", "ssl_check"} & body.keys():
        return "the body has no `type`: not a Slack event, interaction or command"
    problem = _malformed_fields(body)
    if problem is not None:
        return problem
    kind = body.get("type")
    if kind == "event_callback":
        event = body.get("event")
        if not isinstance(event, dict) or not isinstance(event.get("type"), str):
            return "an `event_callback` without an `event` object that has a `type`"
        if event["type"] in ("message", "app_mention"):
            for key in _MESSAGE_STRINGS:
                if event.get(key) is not None and not isinstance(event[key], str):
                    return f"`event.{key}` is {_kind(event[key])}, not a string"
    if kind in ("block_actions", "interactive_message"):
        if not body.get("actions"):
            return f"a `{kind}` payload without `actions`"
        for key in ("user", "channel"):
            if isinstance(body.get(key), str):
                return f"`{key}` of a `{kind}` payload is a string, not an object"
        if kind == "block_actions" and not all("action_id" in a for a in body["actions"]):
            return "an action of a `block_actions` payload has no `action_id`"
    return None


def _signed(key: SlackKey, body: str, headers: dict[str, str]) -> bool:
    """A valid, fresh signature made with this workspace's secret."""
    try:
        return key.verifier.is_valid_request(body, headers)
    except ValueError:  # a timestamp that is no number, a header that is no text
        return False


def _needs_no_team(body: dict[str, Any]) -> bool:
    """Slack's URL check of the events endpoint, and its SSL check, name no team."""
    return body.get("type") == "url_verification" or body.get("ssl_check") == "1"


def refused(headers: dict[str, str], raw: bytes, reason: str) -> web.Response:
    log.warning(
        "slack request refused",
        extra={
            "reason": reason,
            "content_type": headers.get("content-type", "")[:100],
            "body_bytes": len(raw),
        },
    )
    return web.json_response({"error": "invalid request body", "reason": reason}, status=400)
