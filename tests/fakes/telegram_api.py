"""A loopback fake of the Telegram Bot API that checks every request against the published
specification (`tests/fakes/telegram_spec.py`). A request that breaks a rule gets the 400 the
real API sends, and is kept in `refused` so a test can fail on it.

It also enforces Telegram's flood limits (https://core.telegram.org/bots/faq#my-bot-is-hitting-
limits-how-do-i-avoid-this), each as a sliding window, the strictest reading of "N per T":

- about one message a second in a chat (a 5% tolerance for arrival jitter on loopback);
- 20 messages a minute in a group (a negative chat id: groups, supergroups, channels);
- 30 a second for the whole bot.

What counts: the FAQ speaks of messages. `sendMessage` and `editMessageText` count in all three
(Telegram floods edits like sends in practice); `sendChatAction` and `deleteMessage` count only
in the bot's 30/s. `sendMessageDraft` (private chats only) has no documented limit: it is
counted, conservatively, in the bot's 30/s and at one a second per chat in a window of its own
(a draft is not a message). A draft is shown until a message is sent to its chat (and thread)
or for 30 s (`live_drafts`). A request the fake refused does not count. Every 429 is counted, apart:
`injected_429` for the ones a test asked for (`fail`), `self_caused` for the ones the client
earned by breaking a limit."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import math
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.fakes.telegram_files import FileRefused, TelegramFiles
from tests.fakes.telegram_polling import Pollers
from tests.fakes.telegram_spec import InvalidRequest, check, check_edit, visible_text

MESSAGES = {"sendMessage", "editMessageText", "copyMessage", "forwardMessage", "sendPhoto"}
BOT_COUNTED = MESSAGES | {
    "sendChatAction",
    "deleteMessage",
    "setMessageReaction",
    "sendMessageDraft",
}
BOT_USERNAME = "switchboard_test_bot"
DRAFT_LASTS_S = 30.0


@dataclass(frozen=True)
class Failure:
    status: int
    description: str
    retry_after: int | None
    when: Callable[[dict[str, Any]], bool]
    stall_s: float = 0.0


@dataclass(frozen=True)
class TooMany:
    """A 429 the client earned: which call broke which limit ("chat", "group", "bot")."""

    method: str
    chat: Any
    limit: str
    at: float
    wait_s: float


@dataclass
class Call:
    method: str
    params: dict[str, Any]
    at: float


@dataclass
class FakeTelegram:
    token: str = "123456:TEST"
    url: str = ""
    calls: list[Call] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)
    reached: list[str] = field(default_factory=list)  # every request's method, refused too
    failures: dict[str, list[Failure]] = field(default_factory=dict)
    # (method, which calls, event): such calls are recorded, then answered once it is set
    gates: list[tuple[str, Callable[[dict[str, Any]], bool], asyncio.Event]] = field(
        default_factory=list
    )
    bot_id: int = 123456
    enforce_limits: bool = True  # answer 429 when the client breaks a flood limit
    per_chat_interval_s: float = 1.0
    tolerance: float = 0.95  # a chat's messages may arrive this fraction of the interval apart
    group_per_minute: int = 20
    global_per_second: int = 30
    injected_429: int = 0  # 429s a test asked for (`fail`)
    self_caused: list[TooMany] = field(default_factory=list)  # 429s the client's pacing earned
    drafts: dict[tuple[Any, Any], tuple[Any, str, float]] = field(default_factory=dict)
    shown: dict[Any, dict[int, str]] = field(default_factory=dict)  # the bot's messages, by chat
    _sent_at: dict[tuple[str, Any], deque[float]] = field(default_factory=dict)
    posted: dict[int, dict[str, Any]] = field(default_factory=dict)  # the bot's, as returned
    _updates: list[dict[str, Any]] = field(default_factory=list)
    _new_update: asyncio.Event = field(default_factory=asyncio.Event)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    files: TelegramFiles = field(init=False)
    pollers: Pollers = field(default_factory=Pollers)  # two bot instances polling: 409s

    def __post_init__(self) -> None:
        self.files = TelegramFiles(self.token)

    @property
    def base_url(self) -> str:
        return f"{self.url}/bot"

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/bot{token}/{method}", self._handle)
        app.router.add_get("/file/bot{token}/{path:.+}", self.files.serve)
        return app

    # -- test controls -------------------------------------------------------------------

    def push_message(
        self,
        text: str | None,
        *,
        user: int,
        chat: int | None = None,
        chat_type: str = "private",
        thread: int | None = None,
        sticker: bool = False,
        entities: list[dict[str, Any]] | None = None,
        reply_to: dict[str, Any] | None = None,
        title: str | None = None,
        **fields: Any,
    ) -> int:
        """A person's message as Telegram delivers it; `entities` as Telegram marks up its text
        (see `entity`), `reply_to` the message it replies to, `title` a group's; `fields` add
        to it as Telegram would (`reply_to_message` with the whole message replied to,
        `quote`, `external_reply`, ...)."""
        update_id = next(self._ids)
        message: dict[str, Any] = {
            "message_id": 1000 + update_id,
            "date": int(time.time()),
            "chat": {"id": chat if chat is not None else user, "type": chat_type},
            "from": {"id": user, "is_bot": False, "first_name": f"user{user}"},
        }
        if title is not None:
            message["chat"]["title"] = title
        if text is not None:
            message["text"] = text
        if entities:
            message["entities"] = entities
        if reply_to is not None:
            message["reply_to_message"] = reply_to
        if sticker:
            message["sticker"] = {
                "file_id": "s1",
                "file_unique_id": "s1",
                "type": "regular",
                "width": 1,
                "height": 1,
                "is_animated": False,
                "is_video": False,
            }
        if thread is not None:
            message["message_thread_id"] = thread
            message["is_topic_message"] = True
            message["chat"]["is_forum"] = True
        message.update(fields)
        self._updates.append({"update_id": update_id, "message": message})
        self._new_update.set()
        return update_id

    def push_update(self, update: dict[str, Any]) -> int:
        """An update exactly as given: a real-shaped one (tests/adapters/hostile/real_payloads.py),
        its `update_id` above those pushed before it, as Telegram numbers them."""
        self._updates.append(update)
        self._new_update.set()
        return int(update["update_id"])

    @staticmethod
    def entity(kind: str, text: str, part: str, **more: Any) -> dict[str, Any]:
        """The entity Telegram marks `part` of `text` with (offsets in UTF-16 code units)."""
        start = text.index(part)
        return {
            "type": kind,
            "offset": len(text[:start].encode("utf-16-le")) // 2,
            "length": len(part.encode("utf-16-le")) // 2,
            **more,
        }

    def push_callback(self, data: str, *, user: int, message: dict[str, Any]) -> int:
        update_id = next(self._ids)
        self._updates.append(
            {
                "update_id": update_id,
                "callback_query": {
                    "id": f"cb{update_id}",
                    "chat_instance": "ci",
                    "data": data,
                    "from": {"id": user, "is_bot": False, "first_name": f"user{user}"},
                    "message": message,
                },
            }
        )
        self._new_update.set()
        return update_id

    def fail(
        self,
        method: str,
        status: int,
        description: str = "",
        retry_after: int | None = None,
        times: int = 1,
        when: Callable[[dict[str, Any]], bool] = lambda params: True,
        stall_s: float = 0.0,
    ) -> None:
        """The next `times` calls of `method` whose params satisfy `when` fail so; or, with
        `stall_s`, succeed (the message is stored) but answer that late, as when a response
        is lost on its way back and the client times out."""
        failure = Failure(status, description, retry_after, when, stall_s)
        self.failures.setdefault(method, []).extend([failure] * times)

    def gate(
        self, method: str, when: Callable[[dict[str, Any]], bool] = lambda params: True
    ) -> asyncio.Event:
        """Calls of `method` whose params satisfy `when` are answered only once the returned
        event is set (a Bot API slow to answer)."""
        gate = asyncio.Event()
        self.gates.append((method, when, gate))
        return gate

    @property
    def too_many(self) -> int:
        """Every 429 answered: asked for by a test, or earned by the client."""
        return self.injected_429 + len(self.self_caused)

    @property
    def conflicts(self) -> int:
        return self.pollers.conflicts

    def sent(self, method: str = "sendMessage") -> list[dict[str, Any]]:
        return [c.params for c in self.calls if c.method == method]

    def chat(self, chat: Any) -> list[str]:
        """The text of the bot's messages a user sees in this chat now, oldest first."""
        return list(self.shown.get(chat, {}).values())

    def live_drafts(self) -> dict[tuple[Any, Any], str]:
        """The drafts a user would still see, by (chat, thread): their text."""
        now = time.monotonic()
        return {k: text for k, (_, text, at) in self.drafts.items() if now - at < DRAFT_LASTS_S}

    # -- the API -------------------------------------------------------------------------

    async def _handle(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        self.reached.append(method)
        if request.match_info["token"] != self.token:
            return _error(401, "Unauthorized")
        if request.content_type == "application/json":
            params = {
                k: v if isinstance(v, str) else json.dumps(v)
                for k, v in (await request.json()).items()
            }
        else:
            params = {k: str(v) for k, v in (await request.post()).items()}
        try:
            decoded = check(method, params)
        except LookupError:
            self.refused.append((method, "method not found"))
            return _error(404, "Not Found: method not found")
        except InvalidRequest as exc:
            self.refused.append((method, str(exc)))
            return _error(400, str(exc))
        pending = self.failures.get(method, [])
        stall = 0.0
        if pending and pending[0].when(decoded):
            failure = pending.pop(0)
            if not failure.stall_s:
                if failure.status == 429:
                    self.injected_429 += 1
                return _error(failure.status, failure.description, failure.retry_after)
            stall = failure.stall_s
        if method == "sendMessageDraft" and str(decoded["chat_id"]).startswith("-"):
            self.refused.append((method, "not a private chat"))
            return _error(400, "Bad Request: drafts can be sent to private chats only")
        if self.enforce_limits and (broken := self._flood(method, decoded)) is not None:
            self.self_caused.append(broken)
            wait = max(1, math.ceil(broken.wait_s))
            return _error(429, f"Too Many Requests: retry after {wait}", wait)
        self.calls.append(Call(method, decoded, time.monotonic()))
        for gated, when, gate in self.gates:
            if gated == method and when(decoded):
                await gate.wait()
        if method == "getUpdates":
            status, polled = await self.pollers.serve(request, self._result(method, decoded))
            if status != 200:
                return _error(status, polled)
            return web.json_response({"ok": True, "result": polled})
        try:
            result = await self._result(method, decoded)
        except (FileRefused, InvalidRequest) as exc:
            return _error(400, str(exc))
        if stall:
            await asyncio.sleep(stall)  # stored, but the answer comes too late
        return web.json_response({"ok": True, "result": result})

    def _flood(self, method: str, p: dict[str, Any]) -> TooMany | None:
        """The flood limit this call breaks, if any; else it is counted in its windows."""
        if method not in BOT_COUNTED:
            return None
        now = time.monotonic()
        chat = p.get("chat_id")
        windows: list[tuple[str, Any, int, float]] = [("bot", None, self.global_per_second, 1.0)]
        if method == "sendMessageDraft":
            windows.append(("draft", chat, 1, self.per_chat_interval_s * self.tolerance))
        if method in MESSAGES:
            windows.append(("chat", chat, 1, self.per_chat_interval_s * self.tolerance))
            if str(chat).startswith("-"):
                windows.append(("group", chat, self.group_per_minute, 60.0))
        for limit, key, count, per_s in windows:
            sent = self._sent_at.setdefault((limit, key), deque())
            while sent and now - sent[0] >= per_s:
                sent.popleft()
            if len(sent) >= count:
                return TooMany(method, chat, limit, now, sent[0] + per_s - now)
        for limit, key, _, _ in windows:
            self._sent_at[(limit, key)].append(now)
        return None

    async def _result(self, method: str, p: dict[str, Any]) -> Any:
        match method:
            case "getMe":
                return {
                    "id": self.bot_id,
                    "is_bot": True,
                    "first_name": "Switchboard",
                    "username": BOT_USERNAME,
                }
            case "getFile":
                return self.files.get_file(p)
            case "getUpdates":
                offset = int(p.get("offset", 0))
                self._updates = [u for u in self._updates if u["update_id"] >= offset]
                if not self._updates:
                    self._new_update.clear()
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(
                            self._new_update.wait(), min(float(p.get("timeout", 0)), 1.0)
                        )
                return self._updates[: int(p.get("limit", 100))]
            case "sendMessageDraft":
                where = (p["chat_id"], p.get("message_thread_id"))
                text = visible_text(p.get("text", ""), p.get("parse_mode"))
                self.drafts[where] = (p["draft_id"], text, time.monotonic())
                return True
            case "deleteMessage":
                if self.shown.get(p["chat_id"], {}).pop(p["message_id"], None) is None:
                    raise InvalidRequest("Bad Request: message to delete not found")
                return True
            case "sendMessage" | "editMessageText":
                chat_id = p.get("chat_id")
                if method == "sendMessage":  # the message takes the draft's place
                    self.drafts.pop((chat_id, p.get("message_thread_id")), None)
                else:  # refused as Telegram refuses it
                    check_edit(self.shown.get(chat_id, {}), self.posted.get(p["message_id"]), p)
                message: dict[str, Any] = {
                    "message_id": p.get("message_id") or 5000 + next(self._ids),
                    "date": int(time.time()),
                    "chat": {
                        "id": chat_id,
                        "type": "private" if int(chat_id) > 0 else "supergroup",
                    },
                    "from": {"id": self.bot_id, "is_bot": True, "first_name": "Switchboard"},
                    "text": visible_text(p["text"], p.get("parse_mode")),
                }
                if "message_thread_id" in p:
                    message["message_thread_id"] = p["message_thread_id"]
                    message["is_topic_message"] = True
                if "reply_markup" in p:
                    message["reply_markup"] = p["reply_markup"]
                self.posted[message["message_id"]] = message
                self.shown.setdefault(chat_id, {})[message["message_id"]] = message["text"]
                return message
            case _:
                return True


def _error(status: int, description: str, retry_after: int | None = None) -> web.Response:
    body: dict[str, Any] = {"ok": False, "error_code": status, "description": description}
    if retry_after is not None:
        body["parameters"] = {"retry_after": retry_after}
    return web.json_response(body, status=status)
