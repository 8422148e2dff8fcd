"""`POST /slack/events`: the one HTTP door for every Slack workspace. The request goes to the
workspace whose signing secret signed it and whose team it names, and that workspace's bolt
app answers it; a request no configured secret signed is refused with 401.

bolt trusts the shape of what it parses: a body that is not JSON, or a field of a type Slack
never sends, makes it (or one of our listeners) raise, which would answer 500 and have Slack
send the request again. So a signed body is checked here before bolt sees it, and one that is
no Slack request is refused with 400 and a log line saying what is wrong with it. A failure
after that (the store is down) stays a 5xx, so that Slack retries."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Sequence
from typing import Any

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.request.internals import extract_content_type, parse_body

from adapters.slack.adapter import SlackAdapter
from bridge.forwarding import Forwarding, NotReady
from bridge.store import Forwarded

log = logging.getLogger(__name__)

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


class SlackFront:
    def __init__(self, adapters: Iterable[SlackAdapter]) -> None:
        self._adapters = [a for a in adapters if a.verifier is not None]
        # Set while this replica is a standby: checked requests are stored for the active one.
        self.forwarding: Forwarding | None = None

    def update(self, adapters: Iterable[SlackAdapter]) -> None:
        """The workspaces' adapters after a reload."""
        self._adapters = [a for a in adapters if a.verifier is not None]

    async def handle(self, request: web.Request) -> web.Response:
        raw = await request.read()
        headers = {k.lower(): v for k, v in request.headers.items()}
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            return _refused(headers, raw, "the body is not UTF-8 text")
        signed = [a for a in self._adapters if _signed(a, text, headers)]
        if not signed:
            return web.json_response({"error": "invalid request"}, status=401)
        content_type = extract_content_type({"content-type": [headers.get("content-type", "")]})
        try:  # as bolt will: JSON, or a form whose `payload` field is JSON
            body = parse_body(text, content_type)
        except ValueError as exc:
            return _refused(headers, raw, f"the body does not parse: {exc}")
        except RecursionError:
            return _refused(headers, raw, "the body is nested too deeply")
        problem = malformed(body)
        if problem is not None:
            return _refused(headers, raw, problem)
        bolt_headers: dict[str, str | Sequence[str]] = dict(headers)
        bolt_request = AsyncBoltRequest(body=text, query=request.query_string, headers=bolt_headers)
        team = bolt_request.context.team_id
        if team is None and not _needs_no_team(body):
            return _refused(headers, raw, "the body names no Slack team")
        if team is not None:
            signed = [a for a in signed if a.settings.team_id == team]
        if not signed:
            return web.json_response({"error": "invalid request"}, status=401)
        if team is not None and self.forwarding is not None:
            # A platform id, so that a copy is stored once: an event's, or the trigger of a
            # command or a button press.
            key = body.get("event_id") or body.get("trigger_id")
            await self.forwarding.forward(
                "slack",
                signed[0].workspace.id,
                key if isinstance(key, str) else None,
                text,
                headers,
                request.query_string,
            )  # a store that fails raises: a 500, and Slack sends it again
            return web.Response(status=200)
        if team is not None and signed[0].identity is None:  # restarting, or not started
            log.info("slack request while its workspace's bot is not running; answered 503")
            return web.json_response({"error": "not running, send it again later"}, status=503)
        return await to_aiohttp_response(await signed[0].app.async_dispatch(bolt_request))

    async def replay(self, request: Forwarded) -> None:
        """A request a standby replica checked and stored, handled here as if it had just
        come in. It is signed again with its workspace's own secret and a fresh timestamp:
        bolt refuses a signature older than five minutes, and a request may have waited
        longer than that for an active replica."""
        adapter = next((a for a in self._adapters if a.workspace.id == request.workspace_id), None)
        if adapter is None or adapter.verifier is None:
            log.warning(
                "forwarded slack request for a workspace no longer served; dropped",
                extra={"workspace": request.workspace_id},
            )
            return
        if adapter.identity is None:
            raise NotReady(f"workspace {request.workspace_id}'s Slack app is not running")
        timestamp = str(int(time.time()))
        headers: dict[str, str | Sequence[str]] = {
            **request.headers,
            "x-slack-request-timestamp": timestamp,
            "x-slack-signature": adapter.verifier.generate_signature(
                timestamp=timestamp, body=request.body
            )
            or "",
        }
        bolt_request = AsyncBoltRequest(body=request.body, query=request.query, headers=headers)
        response = await adapter.app.async_dispatch(bolt_request)
        if response.status >= 500:
            raise RuntimeError(f"slack request not handled ({response.status})")


def _signed(adapter: SlackAdapter, body: str, headers: dict[str, str]) -> bool:
    try:
        return adapter.signed_by_slack(body, headers)
    except ValueError:  # a timestamp that is no number, a header that is no text
        return False


def _needs_no_team(body: dict[str, Any]) -> bool:
    """Slack's URL check of the events endpoint, and its SSL check, name no team."""
    return body.get("type") == "url_verification" or body.get("ssl_check") == "1"


def _refused(headers: dict[str, str], raw: bytes, reason: str) -> web.Response:
    log.warning(
        "slack request refused",
        extra={
            "reason": reason,
            "content_type": headers.get("content-type", "")[:100],
            "body_bytes": len(raw),
        },
    )
    return web.json_response({"error": "invalid request body", "reason": reason}, status=400)
