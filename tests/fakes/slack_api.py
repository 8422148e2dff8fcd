"""A loopback fake of the Slack Web API (and Socket Mode) that checks every call against the
published OpenAPI specification (`tests/fakes/slack_spec.py`). A call that breaks a rule gets
the error the real API gives, and is kept in `refused` so a test can fail on it.

It keeps what a workspace would show (messages with their metadata, reactions, status lines)
and can answer 429 with Retry-After, 5xx, or stall past the client's timeout after storing a
post, as Slack does when a response is lost.

It enforces Slack's rate limits where Switchboard leans on them
(https://api.slack.com/apis/rate-limits), each as a sliding window: `chat.postMessage` about
one a second per channel (a 5% tolerance for arrival jitter on loopback); `chat.update` and
`chat.delete` tier 3, 50 a minute per workspace; the streaming methods (`chat.startStream`,
`chat.appendStream`, `chat.stopStream`, for apps with the assistant features), whose pages
give no number the fake could trust, conservatively as tier 3 too. A call refused does not
count. Every 429 is counted, apart: `injected_429` for the ones a test asked for (`fail`),
`self_caused` for the ones the client earned by breaking a limit."""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

from aiohttp import WSMsgType, web

from tests.fakes.slack_directory import SlackDirectory
from tests.fakes.slack_files import SlackFiles
from tests.fakes.slack_history import history
from tests.fakes.slack_spec import STREAMING, SlackError, check, check_response
from tests.fakes.slack_streams import stream


@dataclass
class Team:
    team_id: str
    token: str
    bot_user_id: str
    bot_id: str
    app_token: str | None = None
    assistant: bool = False  # assistant.threads.setStatus allowed (the app has assistant:write)
    streaming: bool | None = None  # chat.*Stream allowed; None: as `assistant`


@dataclass
class _Fault:
    method: str
    status: int
    times: int
    retry_after: int | None = None
    stall_s: float = 0.0  # store the post, then answer this late (the client times out)
    when: Callable[[dict[str, Any]], bool] = lambda args: True
    error: str | None = None


@dataclass
class FakeSlack:
    url: str = ""
    teams: dict[str, Team] = field(default_factory=dict)  # by bot token
    messages: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # by channel
    reactions: list[tuple[str, str, str, str]] = field(default_factory=list)  # verb, ch, ts, name
    statuses: list[tuple[str, str, str]] = field(default_factory=list)
    suggested: list[tuple[str, str, list[dict[str, str]]]] = field(default_factory=list)
    responses: list[dict[str, Any]] = field(default_factory=list)  # posted to response_urls
    calls: list[tuple[str, dict[str, Any], str]] = field(default_factory=list)  # method, args, team
    call_times: list[float] = field(default_factory=list)  # when each of `calls` arrived
    refused: list[tuple[str, str]] = field(default_factory=list)
    reached: list[str] = field(default_factory=list)  # every request's method, refused too
    enforce_rate: bool = True  # answer 429 when the client breaks a rate limit
    post_interval_s: float = 1.0  # chat.postMessage, per channel
    tolerance: float = 0.95
    tier3_per_minute: int = 50  # chat.update, chat.delete, per workspace
    injected_429: int = 0  # 429s a test asked for (`fail`)
    self_caused: list[tuple[str, str]] = field(default_factory=list)  # (method, channel)
    _faults: list[_Fault] = field(default_factory=list)
    gates: dict[str, asyncio.Event] = field(default_factory=dict)  # see `gate`
    _ts: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _sent_at: dict[tuple[str, str], deque[float]] = field(default_factory=dict)
    _sockets: dict[str, web.WebSocketResponse] = field(default_factory=dict)
    _acks: dict[str, asyncio.Future[dict[str, Any]]] = field(default_factory=dict)
    _connected: dict[str, asyncio.Event] = field(default_factory=dict)
    files: SlackFiles = field(init=False)
    directory: SlackDirectory = field(default_factory=SlackDirectory)  # names of ids

    def __post_init__(self) -> None:
        self.files = SlackFiles(
            lambda: self.url, lambda: {t: team.team_id for t, team in self.teams.items()}
        )

    @property
    def base_url(self) -> str:
        return f"{self.url}/api/"

    def add_team(self, team_id: str, **kwargs: Any) -> Team:
        suffix = team_id.lower()
        team = Team(
            team_id=team_id,
            token=kwargs.pop("token", f"xoxb-test-{suffix}"),
            bot_user_id=kwargs.pop("bot_user_id", f"UBOT{team_id}"),
            bot_id=kwargs.pop("bot_id", f"BBOT{team_id}"),
            **kwargs,
        )
        self.teams[team.token] = team
        return team

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_route("*", "/api/{method}", self._handle)
        app.router.add_get("/socket", self._socket)
        app.router.add_post("/commands/{team}/{command}/{secret}", self._response_url)
        app.router.add_get("/files-pri/{key}/{rest:.+}", self.files.serve)
        return app

    def response_url(self, team: str) -> str:
        """Where a slash command's answer goes (Slack's hooks.slack.com/commands/...)."""
        return f"{self.url}/commands/{team}/{next(self._ts)}/s3cr3t"

    async def _response_url(self, request: web.Request) -> web.Response:
        try:
            body = await request.json()
            check_response(body)
        except (ValueError, SlackError) as exc:
            error = exc.error if isinstance(exc, SlackError) else "invalid_payload"
            self.refused.append(("response_url", error))
            return web.Response(status=400, text=error)
        self.responses.append(body)
        return web.Response(text="ok")

    def fail(
        self,
        method: str,
        status: int,
        *,
        times: int = 1,
        retry_after: int | None = None,
        stall_s: float = 0.0,
        when: Callable[[dict[str, Any]], bool] = lambda args: True,
        error: str | None = None,
    ) -> None:
        """The next `times` matching calls fail: `status` (429 with `retry_after`, 5xx), or
        200 with `error`, or (`stall_s`) succeed but answer too late."""
        self._faults.append(_Fault(method, status, times, retry_after, stall_s, when, error))

    def gate(self, method: str) -> asyncio.Event:
        """Calls of `method` are recorded, then answered only once the returned event is set
        (a Web API slow to answer)."""
        gate = self.gates[method] = asyncio.Event()
        return gate

    def posts(self, channel: str | None = None) -> list[dict[str, Any]]:
        """Messages the bot posted (not the progress messages with a Stop button, nor
        streamed ones)."""
        chans = [channel] if channel else list(self.messages)
        return [
            m
            for c in chans
            for m in self.messages.get(c, [])
            if "blocks" not in m and m["bot"] and "streaming" not in m
        ]

    def shown(self, channel: str) -> list[str]:
        """The text of every message of the bot a user sees in the channel now."""
        return [m["text"] for m in self.messages.get(channel, []) if m["bot"]]

    def method_calls(self, method: str) -> list[dict[str, Any]]:
        return [args for m, args, _ in self.calls if m == method]

    # -- HTTP ----------------------------------------------------------------------------

    async def _handle(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        self.reached.append(method)
        args: dict[str, Any] = dict(request.query)
        token = request.headers.get("Authorization", "").removeprefix("Bearer ") or None
        if request.content_type == "application/json":
            args.update(await request.json())
        elif request.can_read_body:
            args.update(parse_qsl(await request.text()))
        token = args.pop("token", None) or token
        try:
            args = check(method, request.method, args, token)
        except SlackError as exc:
            self.refused.append((method, exc.error))
            return web.json_response({"ok": False, "error": exc.error}, status=exc.status)
        fault = next(
            (f for f in self._faults if f.method == method and f.times > 0 and f.when(args)), None
        )
        if fault is not None and not fault.stall_s:
            fault.times -= 1
            headers = {"Retry-After": str(fault.retry_after)} if fault.retry_after else {}
            error = fault.error or ("ratelimited" if fault.status == 429 else "internal_error")
            if fault.status == 429:
                self.injected_429 += 1
            return web.json_response(
                {"ok": False, "error": error}, status=fault.status, headers=headers
            )
        if method == "apps.connections.open":
            team = next((t for t in self.teams.values() if t.app_token == token), None)
        else:
            team = self.teams.get(token or "")
        if team is None:
            return web.json_response({"ok": False, "error": "invalid_auth"})
        if self.enforce_rate and (wait := self._too_fast(method, args, team)) is not None:
            self.self_caused.append((method, str(args.get("channel"))))
            return web.json_response(
                {"ok": False, "error": "ratelimited"},
                status=429,
                headers={"Retry-After": str(max(1, math.ceil(wait)))},
            )
        self.calls.append((method, args, team.team_id))
        self.call_times.append(time.monotonic())
        if (gate := self.gates.get(method)) is not None:
            await gate.wait()
        try:
            result = self._result(method, args, team)
        except SlackError as exc:
            return web.json_response({"ok": False, "error": exc.error}, status=exc.status)
        if fault is not None:
            fault.times -= 1
            await asyncio.sleep(fault.stall_s)
        return web.json_response({"ok": True, **result})

    def _too_fast(self, method: str, args: dict[str, Any], team: Team) -> float | None:
        """How long the client should have waited, if this call breaks a limit; else it is
        counted in its window."""
        if method == "chat.postMessage":
            key, count, per_s = args["channel"], 1, self.post_interval_s * self.tolerance
        elif method in ("chat.update", "chat.delete", *STREAMING):
            key, count, per_s = team.team_id, self.tier3_per_minute, 60.0
        else:
            return None
        now = time.monotonic()
        sent = self._sent_at.setdefault((method, key), deque())
        while sent and now - sent[0] >= per_s:
            sent.popleft()
        if len(sent) >= count:
            return float(sent[0] + per_s - now)
        sent.append(now)
        return None

    @property
    def too_many(self) -> int:
        """Every 429 answered: asked for by a test, or earned by the client."""
        return self.injected_429 + len(self.self_caused)

    def _result(self, method: str, args: dict[str, Any], team: Team) -> dict[str, Any]:
        match method:
            case "auth.test":
                return {
                    "url": f"https://{team.team_id.lower()}.slack.test/",
                    "team": team.team_id,
                    "team_id": team.team_id,
                    "user": "switchboard",
                    "user_id": team.bot_user_id,
                    "bot_id": team.bot_id,
                }
            case "chat.postMessage":
                # Posted to a user id, a message lands in the app's DM with them, and Slack
                # answers with that DM's channel id (here the harness's `D` + the user's name).
                channel = str(args["channel"])
                if channel.startswith("U"):
                    channel = "D" + channel[1:]
                ts = self._post({**args, "channel": channel}, team)["ts"]
                return {"channel": channel, "ts": ts}
            case "chat.update":
                message = self._find(args["channel"], args["ts"])
                message.update(text=args.get("text"), blocks=args.get("blocks"))
                return {"channel": args["channel"], "ts": args["ts"]}
            case "chat.delete":
                self.messages[args["channel"]].remove(self._find(args["channel"], args["ts"]))
                return {"channel": args["channel"], "ts": args["ts"]}
            case "reactions.add" | "reactions.remove":
                self._find(args["channel"], args["timestamp"])
                verb = method.split(".")[1]
                self.reactions.append((verb, args["channel"], args["timestamp"], args["name"]))
                return {}
            case "conversations.replies" | "conversations.history":
                return history(self.messages, method, args)
            case "assistant.threads.setStatus":
                if not team.assistant:
                    raise SlackError("missing_scope")
                self.statuses.append((args["channel_id"], args["thread_ts"], args["status"]))
                return {}
            case "assistant.threads.setSuggestedPrompts":
                if not team.assistant:
                    raise SlackError("missing_scope")
                self.suggested.append((args["channel_id"], args["thread_ts"], args["prompts"]))
                return {}
            case "files.info":
                info = self.files.info(str(args.get("file")), team.team_id)
                if info is None:
                    raise SlackError("file_not_found")
                return {"file": info}
            case "conversations.info":
                return self.directory.conversation(args)
            case "users.info":
                return self.directory.user(args, team.team_id)
            case "chat.startStream" | "chat.appendStream" | "chat.stopStream":
                return stream(self, method, args, team)
            case "apps.connections.open":
                return {"url": f"ws://{self.url.split('://', 1)[1]}/socket?team={team.team_id}"}
        return {}

    def _post(self, args: dict[str, Any], team: Team) -> dict[str, Any]:
        ts = f"{1_700_000_000 + next(self._ts)}.000100"
        message = {
            "type": "message",
            "ts": ts,
            "thread_ts": args.get("thread_ts"),
            "text": args.get("text"),
            "user": team.bot_user_id,
            "bot_id": team.bot_id,
            "bot": True,
            "team": team.team_id,
            "metadata": args.get("metadata"),
        }
        if args.get("blocks"):
            message["blocks"] = args["blocks"]
        self.messages.setdefault(args["channel"], []).append(message)
        return message

    def add_user_message(
        self, channel: str, text: str, user: str, thread_ts: str | None = None
    ) -> str:
        """A message an operator wrote (so the bot can react to it or reply in its thread)."""
        ts = f"{1_700_000_000 + next(self._ts)}.000200"
        message = {
            "type": "message",
            "ts": ts,
            "thread_ts": thread_ts,
            "text": text,
            "user": user,
            "bot": False,
        }
        if thread_ts is not None:  # as Slack shows a reply: who started the thread
            root = self._find(channel, thread_ts)
            message["parent_user_id"] = root["user"]
            root["thread_ts"] = thread_ts
        self.messages.setdefault(channel, []).append(message)
        return ts

    def _find(self, channel: str, ts: str) -> dict[str, Any]:
        for message in self.messages.get(channel, []):
            if message["ts"] == ts:
                return message
        raise SlackError("message_not_found")

    # -- Socket Mode ---------------------------------------------------------------------

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        team = request.query["team"]
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        self._sockets[team] = ws
        await ws.send_json({"type": "hello", "num_connections": 1})
        self._connected.setdefault(team, asyncio.Event()).set()
        async for msg in ws:
            if msg.type == WSMsgType.TEXT:
                ack = json.loads(msg.data)
                future = self._acks.pop(ack.get("envelope_id", ""), None)
                if future is not None and not future.done():
                    future.set_result(ack)
        self._sockets.pop(team, None)
        return ws

    async def socket_drop(self, team: str) -> None:
        """Close the team's Socket Mode connection from Slack's side, as a network drop does."""
        await self._sockets[team].close()

    async def socket_send(self, team: str, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        """Deliver one envelope over the team's Socket Mode connection; its ack."""
        await asyncio.wait_for(self._connected.setdefault(team, asyncio.Event()).wait(), 10)
        envelope_id = f"env-{next(self._ts)}"
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._acks[envelope_id] = future
        await self._sockets[team].send_json(
            {
                "envelope_id": envelope_id,
                "type": kind,
                "payload": payload,
                "accepts_response_payload": False,
                "retry_attempt": 0,
                "retry_reason": "",
            }
        )
        return await asyncio.wait_for(future, 10)
