"""Starting the real App with Slack workspaces against the fake Web API, and Slack's side of
the Events API: correctly signed requests, as Slack sends them, into our aiohttp server."""

from __future__ import annotations

import hashlib
import hmac
import io
import itertools
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import aiohttp
import jsonschema

from adapters.server.app import App
from config import load
from runtime.tools.command import CommandToolSpec
from tests.config_file import Table, anthropic, workspace, write_config
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.slack_api import FakeSlack
from tests.topology import Topology

_REPO = Path(__file__).resolve().parents[2]
_WRAPPER = next(
    p
    for p in (
        _REPO.parent / "shared/specs/slack/slack_common_event_wrapper_schema.json",
        _REPO / "tests/specs/slack/slack_common_event_wrapper_schema.json",
    )
    if p.exists()
)
WRAPPER_SCHEMA = json.loads(_WRAPPER.read_text())

ACME_SECRET, GLOBEX_SECRET = "acme-signing-secret", "globex-signing-secret"
ALICE, BOB, MALLORY = "UALICE", "UBOB", "UMALLORY"
OPS = "COPS"  # the channel acme allows

ACME_OPERATOR = {"id": "alice", "primary": True, "slack_user_id": ALICE, "notify_via": "slack"}


async def start_app(
    db_path: Path,
    anthropic_api: FakeAnthropic,
    slack: FakeSlack,
    *,
    agent_tools: Sequence[str] = ("notify_operator",),
    tools: Sequence[CommandToolSpec] = (),
    token: str | None = None,
    signing_secret: str | None = ACME_SECRET,
    app_token: str | None = None,
    more_workspaces: Sequence[Table] = (),
    slack_extra: Table | None = None,
    acme_extra: Table | None = None,
    topology: Topology | None = None,
) -> App:
    """Workspace `acme` on team T1: events over HTTP (signed with `signing_secret`) and, with
    `app_token`, Socket Mode; operator alice and the channel OPS allowed. `slack_extra`,
    `acme_extra`: more keys of acme's [slack] table and of acme's own. With `topology`, started
    there (its database, not `db_path`): the App a client talks to."""
    acme = next(t for t in slack.teams.values() if t.team_id == "T1")
    team = {
        "team_id": "T1",
        "bot_token": token or acme.token,
        "signing_secret": signing_secret,
        "app_token": app_token,
        "api_base_url": slack.base_url,
        "channels": [OPS],
        "request_timeout_s": 1,
        **(slack_extra or {}),
    }
    acme = workspace("acme", [ACME_OPERATOR], slack=team, agent_tools=agent_tools, tools=tools)
    workspaces = [{**acme, **(acme_extra or {})}, *more_workspaces]
    path = write_config(
        (topology.folder if topology else db_path.parent) / "switchboard.toml",
        db=topology.db if topology else db_path,
        provider=anthropic(anthropic_api.url),
        workspaces=workspaces,
    )
    if topology is not None:
        return await topology.start(path)
    app = App(load(path), stdin=io.StringIO(), stdout=io.StringIO())
    await app.start()
    return app


def globex_workspace(slack: FakeSlack) -> Table:
    """A second workspace, on team T2, with its own operator bob."""
    globex = next(t for t in slack.teams.values() if t.team_id == "T2")
    team = {
        "team_id": "T2",
        "bot_token": globex.token,
        "signing_secret": GLOBEX_SECRET,
        "api_base_url": slack.base_url,
    }
    return workspace("globex", [{"id": "bob", "primary": True, "slack_user_id": BOB}], slack=team)


def signature(secret: str, timestamp: str, body: str) -> str:
    base = f"v0:{timestamp}:{body}".encode()
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


@dataclass
class Answer:
    status: int
    body: str


_event_ids = itertools.count(1)


class SlackSide:
    """What Slack does to our server: signed event and interactivity requests."""

    def __init__(self, app: App, fake: FakeSlack) -> None:
        self.url = f"http://127.0.0.1:{app.port}/slack/events"
        self.fake = fake

    async def post(
        self,
        body: str,
        *,
        secret: str = ACME_SECRET,
        content_type: str = "application/json",
        age_s: float = 0,
        retry: int | None = None,
        bad_signature: bool = False,
    ) -> Answer:
        timestamp = str(int(time.time() - age_s))
        sig = signature(secret, timestamp, body)
        headers = {
            "Content-Type": content_type,
            "X-Slack-Request-Timestamp": timestamp,
            "X-Slack-Signature": sig[:-4] + "0000" if bad_signature else sig,
        }
        if retry is not None:
            headers |= {"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"}
        async with (
            aiohttp.ClientSession() as http,
            http.post(self.url, data=body.encode(), headers=headers) as response,
        ):
            return Answer(response.status, await response.text())

    def envelope(self, team: str, event: dict[str, Any], event_id: str | None = None) -> str:
        bot = next(t for t in self.fake.teams.values() if t.team_id == team)
        payload = {
            "token": "legacy-verification-token",
            "team_id": team,
            "api_app_id": "A0SWITCH",
            "event": event,
            "type": "event_callback",
            "event_id": event_id or f"Ev{next(_event_ids):08d}",
            "event_time": int(time.time()),
            "authed_users": [bot.bot_user_id],
            "authorizations": [{"team_id": team, "user_id": bot.bot_user_id, "is_bot": True}],
        }
        jsonschema.validate(payload, WRAPPER_SCHEMA)  # our test events look like Slack's
        return json.dumps(payload)

    def message(
        self,
        text: str,
        *,
        user: str = ALICE,
        channel: str = "DALICE",
        thread_ts: str | None = None,
        team: str = "T1",
        kind: str = "message",
        **fields: Any,
    ) -> dict[str, Any]:
        """An operator's message, as the fake workspace stores it and the event carries it."""
        ts = self.fake.add_user_message(channel, text, user, thread_ts)
        event = {
            "type": kind,
            "user": user,
            "text": text,
            "ts": ts,
            "channel": channel,
            "event_ts": ts,
            "team": team,
            **fields,
        }
        if kind == "message":
            event["channel_type"] = "im" if channel.startswith("D") else "channel"
        if thread_ts:
            event["thread_ts"] = thread_ts
        return event

    async def say(
        self, text: str, *, team: str = "T1", secret: str = ACME_SECRET, **kw: Any
    ) -> str:
        """Post an operator's message as an event; the message's ts."""
        event = self.message(text, team=team, **kw)
        answer = await self.post(self.envelope(team, event), secret=secret)
        assert answer.status == 200, answer
        return str(event["ts"])

    async def slash(
        self,
        text: str,
        *,
        user: str = ALICE,
        channel: str = "DALICE",
        command: str = "/switchboard",
        team: str = "T1",
    ) -> Answer:
        """A slash command as Slack posts it: a signed form with the command's fields."""
        form = {
            "token": "legacy-verification-token",
            "team_id": team,
            "team_domain": team.lower(),
            "channel_id": channel,
            "channel_name": "directmessage" if channel.startswith("D") else "ops",
            "user_id": user,
            "user_name": user.lower(),
            "command": command,
            "text": text,
            "api_app_id": "A0SWITCH",
            "is_enterprise_install": "false",
            "response_url": self.fake.response_url(team),
            "trigger_id": f"{next(_event_ids)}.{int(time.time())}.abcdef",
        }
        return await self.post(urlencode(form), content_type="application/x-www-form-urlencoded")

    async def click_stop(self, progress: dict[str, Any], channel: str, user: str = ALICE) -> Answer:
        return await self.click(progress, channel, "switchboard_stop", user)

    async def click(
        self, message: dict[str, Any], channel: str, action_id: str, user: str = ALICE
    ) -> Answer:
        """A `block_actions` payload: `user` pressed the button `action_id` of `message`
        (with its value and block, when the message shows it)."""
        pressed = next(
            (
                (block.get("block_id", "b1"), element.get("value", action_id))
                for block in message.get("blocks") or []
                for element in block.get("elements") or []
                if element.get("action_id") == action_id
            ),
            ("b1", action_id),
        )
        payload = {
            "type": "block_actions",
            "team": {"id": "T1", "domain": "acme"},
            "user": {"id": user, "team_id": "T1"},
            "api_app_id": "A0SWITCH",
            "token": "legacy-verification-token",
            "trigger_id": f"{next(_event_ids)}.{int(time.time())}.abcdef",  # Slack's: one a press
            "container": {"type": "message", "message_ts": message["ts"], "channel_id": channel},
            "channel": {"id": channel, "name": "ops"},
            "message": {k: v for k, v in message.items() if k != "bot" and v is not None},
            "actions": [
                {
                    "action_id": action_id,
                    "block_id": pressed[0],
                    "type": "button",
                    "value": pressed[1],
                    "action_ts": f"{time.time():.6f}",
                }
            ],
        }
        body = urlencode({"payload": json.dumps(payload)})
        return await self.post(body, content_type="application/x-www-form-urlencoded")
