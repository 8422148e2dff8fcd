"""Telegram through python-telegram-bot: updates in, messages and progress out. Thin: trust,
dedupe, routing, retries and chunk sizes are the bridge's; this file only translates."""

from __future__ import annotations

import html
import logging
import re
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any, Literal, TypeVar

import httpx
from telegram import (
    BotCommand,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    Message,
    ReplyParameters,
    Update,
)
from telegram.constants import ChatAction, ParseMode
from telegram.error import BadRequest, Forbidden, NetworkError, RetryAfter, TelegramError
from telegram.ext import Application, CallbackQueryHandler, ContextTypes, MessageHandler, filters

from bridge import (
    Bridge,
    DeliveryError,
    DeliveryKind,
    InboundChat,
    Platform,
    ProgressView,
    Route,
    TransportLimits,
)
from bridge.transport import Budget, Call, Pacing, Rule, Scope
from config.errors import ConfigError
from config.schema import WorkspaceConfig

log = logging.getLogger(__name__)

STOP = "stop"
COMMANDS = [
    BotCommand("stop", "stop what the agent is doing"),
    BotCommand("status", "what the agent is doing now"),
    BotCommand("queue", "how messages during a turn are handled"),
    BotCommand("new", "start a fresh session"),
    BotCommand("help", "what I understand"),
]
ATTACHMENTS = (
    "sticker",
    "photo",
    "document",
    "voice",
    "video",
    "audio",
    "animation",
    "video_note",
    "location",
    "contact",
    "poll",
)


def _plain(rendered: str) -> str:
    """The text of rendered HTML, for when Telegram refuses its entities."""
    return html.unescape(re.sub(r"<[^>]+>", "", rendered))


T = TypeVar("T")
# python-telegram-bot raises these (as TimedOut or NetworkError) when the request never left:
# no connection could be made, or no pooled connection came free.
NEVER_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
MESSAGES = frozenset({Call.POST, Call.EDIT})  # what Telegram counts as messages in a chat


class TelegramTransport:
    """Replies, progress and typing through the bot, paced by the bridge (`limits`).

    Not python-telegram-bot's `AIORateLimiter` (the `rate-limiter` extra), though it paces
    Telegram too: it has no per-chat limit for private chats (only 30/s for the bot and 20/min
    per group), so the bridge would pace anyway; its aiolimiter leaky buckets let a group
    take 20 messages at once and then one every 3 s, more than 20 in some minutes; it waits
    inside the HTTP call, on the real clock, in one line for every call, so a progress edit
    would hold up the reply behind it, and progress could not be dropped when the budget is
    tight; two pacers in series would leave the bridge's record of when each message went
    wrong by what the second one waited; and with `max_retries=0` (the bridge decides every
    retry) its Retry-After handling does nothing.
    """

    platform = Platform.TELEGRAM
    # About 1 message/s per chat, 20/min per group, 30/s per bot (typing actions and deletes
    # included), with a margin; and the bot's messages spread evenly, 25 a second.
    limits: TransportLimits = Pacing(
        max_chars=4096,
        per_conversation_interval_s=1.1,
        global_per_second=25.0,
        rules=(
            Rule(MESSAGES, Scope.CHANNEL, 1, 1.1),
            Rule(MESSAGES, Scope.GROUP, 20, 62.0),
            Rule(MESSAGES, Scope.ACCOUNT, 1, 1 / 25.0, limit=False),
            Rule(frozenset(Call), Scope.ACCOUNT, 28, 1.0),
            Rule(frozenset({Call.INDICATOR}), Scope.CHANNEL, 1, 3.0, limit=False),  # lasts 5 s
            # A chat's second is shared with the replies: edit the progress message at most
            # every 3 s there, so that a reply seldom has to wait out an edit's second.
            Rule(frozenset({Call.EDIT}), Scope.CHANNEL, 1, 3.0, limit=False),
        ),
        group_prefix="-",  # groups, supergroups and channels have negative ids
    )

    def __init__(self, application: Application[Any, Any, Any, Any, Any, Any]) -> None:
        self._app = application
        self._progress: dict[str, Message] = {}

    async def send(
        self, route: Route, text: str, *, kind: DeliveryKind, intent_id: str, chunk: int
    ) -> None:
        reply = (
            ReplyParameters(message_id=int(route.reply_to), allow_sending_without_reply=True)
            if route.reply_to and chunk == 0
            else None
        )
        kwargs: dict[str, Any] = {
            "chat_id": int(route.conversation_id),
            "message_thread_id": int(route.thread_id) if route.thread_id else None,
            "reply_parameters": reply,
        }
        try:
            try:
                await self._app.bot.send_message(text=text, parse_mode=ParseMode.HTML, **kwargs)
            except BadRequest as exc:
                if "can't parse entities" not in exc.message.lower():
                    raise
                log.warning(
                    "entities refused; sending plain text",
                    extra={"delivery_id": intent_id, "error": exc.message},
                )
                await self._app.bot.send_message(text=_plain(text), **kwargs)
        except RetryAfter as exc:
            seconds = self._wait_s(exc)
            raise DeliveryError(
                f"Telegram 429: retry after {seconds:g}s", retryable=True, retry_after=seconds
            ) from exc
        except Forbidden as exc:
            raise DeliveryError(
                f"Telegram 403: {exc.message}", retryable=False, route_gone=True
            ) from exc
        except BadRequest as exc:
            raise DeliveryError(f"Telegram 400: {exc.message}", retryable=False) from exc
        except NetworkError as exc:  # TimedOut included
            landed = self._landed(exc)
            what = "unreachable" if landed == "no" else "failed"
            raise DeliveryError(
                f"Telegram {what}: {exc.message}", retryable=True, landed=landed
            ) from exc

    async def delivered(self, route: Route, intent_id: str, chunk: int) -> bool | None:
        return None  # the Bot API cannot look up a chat's messages

    async def show_progress(self, route: Route, view: ProgressView | None, budget: Budget) -> None:
        key = route.conversation_key
        chat_id = int(route.conversation_id)
        thread = int(route.thread_id) if route.thread_id else None
        shown = self._progress.pop(key, None)
        try:
            if view is None:
                if shown is not None and await self._within(budget, Call.DELETE, shown.delete):
                    shown = None
                return
            await self._within(
                budget,
                Call.INDICATOR,
                lambda: self._app.bot.send_chat_action(
                    chat_id, ChatAction.TYPING, message_thread_id=thread
                ),
            )
            text = f"\u23f3 {view.step} ({view.elapsed_s:.0f}s)"
            if view.note:
                text += f"\n{view.note}"
            stop = InlineKeyboardMarkup([[InlineKeyboardButton("Stop", callback_data=STOP)]])
            if shown is None:
                shown = await self._within(
                    budget,
                    Call.POST,
                    lambda: self._app.bot.send_message(
                        chat_id, text, message_thread_id=thread, reply_markup=stop
                    ),
                )
            elif shown.text != text:
                message = shown
                edited = await self._within(
                    budget, Call.EDIT, lambda: message.edit_text(text, reply_markup=stop)
                )
                if isinstance(edited, Message):
                    shown = edited
        except BadRequest as exc:
            if "not modified" not in exc.message:
                shown = None  # e.g. someone deleted the progress message: post a new one
            log.info("progress not shown", extra={"conversation": key, "error": str(exc)})
        except TelegramError as exc:
            log.info("progress not shown", extra={"conversation": key, "error": str(exc)})
        finally:
            if shown is not None:
                self._progress[key] = shown

    @classmethod
    async def _within(
        cls, budget: Budget, call: Call, request: Callable[[], Awaitable[T]]
    ) -> T | None:
        """Make this progress call if the bridge's budget has room for it now; None when it
        has not, or Telegram said wait (the bridge shows the update again later)."""
        if not budget.take(call):
            return None
        try:
            return await request()
        except RetryAfter as exc:
            budget.back_off(call, cls._wait_s(exc))
            return None

    @staticmethod
    def _wait_s(exc: RetryAfter) -> float:
        wait = exc.retry_after
        return wait.total_seconds() if isinstance(wait, timedelta) else float(wait)

    @staticmethod
    def _landed(exc: NetworkError) -> Literal["no", "unknown"]:
        """Whether a failed request may have reached Telegram: "no" when it never left; a 5xx,
        a read or write timeout or a dropped connection leave it unknown."""
        return "no" if isinstance(exc.__cause__, NEVER_SENT) else "unknown"


class TelegramAdapter:
    """One bot for one workspace: long polling, or updates fed in by the webhook route."""

    def __init__(self, bridge: Bridge, workspace: WorkspaceConfig) -> None:
        assert workspace.telegram is not None
        self._bridge = bridge
        self.workspace = workspace
        self.settings = workspace.telegram
        builder = (
            Application.builder()
            .token(self.settings.bot_token.get_secret_value())
            .base_url(self.settings.api_base_url)
        )
        if self.settings.mode == "webhook":
            builder = builder.updater(None)  # updates arrive through our own HTTP server
        self.application = builder.build()
        self.application.add_handler(MessageHandler(filters.UpdateType.MESSAGE, self._message))
        self.application.add_handler(CallbackQueryHandler(self._callback))
        self.transport = TelegramTransport(self.application)

    async def start(self, public_url: str | None) -> None:
        try:
            await self._start(public_url)
        except TelegramError as exc:
            raise ConfigError(
                f"workspace {self.workspace.id}: Telegram at {self.settings.api_base_url} "
                f"refused to start the bot ({exc.message}). Check telegram.bot_token and "
                "telegram.api_base_url."
            ) from None

    async def _start(self, public_url: str | None) -> None:
        await self.application.initialize()
        await self.application.bot.set_my_commands(COMMANDS)
        await self.application.start()
        if self.settings.mode == "webhook":
            if public_url:
                secret = self.settings.webhook_secret
                await self.application.bot.set_webhook(
                    f"{public_url.rstrip('/')}/telegram/{self.workspace.id}",
                    secret_token=secret.get_secret_value() if secret else None,
                )
        elif self.application.updater is not None:
            await self.application.updater.start_polling(poll_interval=0.0, timeout=10)

    async def stop(self) -> None:
        if self.application.updater is not None and self.application.updater.running:
            await self.application.updater.stop()
        if self.application.running:
            await self.application.stop()
        await self.application.shutdown()

    async def feed(self, data: object) -> str | None:
        """An update from the webhook route, handled (stored) before this returns. When `data`
        is no update this bot can act on, nothing is done with it and what is wrong is returned
        for the route's 400. A failure to store a good update is raised instead: the route
        answers 5xx and Telegram sends the update again."""
        if not isinstance(data, dict):
            json_name = {list: "a list", str: "a string", bool: "a boolean", type(None): "null"}
            return f"an update is a JSON object, not {json_name.get(type(data), 'a number')}"
        if type(data.get("update_id")) is not int:
            return "`update_id` is missing or not an integer"
        try:
            update = Update.de_json(data, self.application.bot)
        except Exception as exc:  # parsing only, no I/O: any failure is the update's
            return f"not a Telegram update ({type(exc).__name__}: {str(exc)[:200]})"

        # python-telegram-bot takes field types on trust: check those our handlers rely on.
        query = update.callback_query
        text, maybe_text, maybe_int = (str,), (str, type(None)), (int, type(None))
        fields: list[tuple[str, object, tuple[type, ...]]] = []
        if query is not None:
            fields += [
                ("callback_query.id", query.id, text),
                ("callback_query.data", query.data, maybe_text),
                ("callback_query.from.id", getattr(query.from_user, "id", None), (int,)),
            ]
        for path, message in (
            ("message", update.message),
            ("callback_query.message", query.message if query else None),
        ):
            if message is None:
                continue
            fields += [
                (f"{path}.message_id", message.message_id, (int,)),
                (f"{path}.chat.id", getattr(message.chat, "id", None), (int,)),
                (f"{path}.text", getattr(message, "text", None), maybe_text),
                (f"{path}.message_thread_id", getattr(message, "message_thread_id", 0), maybe_int),
            ]
            sender = getattr(message, "from_user", None)
            if sender is not None:
                fields += [
                    (f"{path}.from.id", sender.id, (int,)),
                    (f"{path}.from.first_name", sender.first_name, text),
                    (f"{path}.from.last_name", sender.last_name, maybe_text),
                ]
        for path, value, kinds in fields:
            if not isinstance(value, kinds) or isinstance(value, bool):
                expected = " or ".join("null" if k is type(None) else k.__name__ for k in kinds)
                return f"`{path}` is {type(value).__name__}, not {expected}"
        # Not `process_update`: it hands a handler's failure to the error handlers and returns
        # normally, and the route would answer 200 for an update that was never stored.
        for handlers in self.application.handlers.values():
            for handler in handlers:
                check = handler.check_update(update)
                if check is not None and check is not False:
                    context = self.application.context_types.context.from_update(
                        update, self.application
                    )
                    await handler.handle_update(update, self.application, check, context)
                    break
        return None

    def _route(self, message: Message) -> Route:
        thread = message.message_thread_id if message.is_topic_message else None
        return Route(
            platform=Platform.TELEGRAM,
            workspace_id=self.workspace.id,
            conversation_id=str(message.chat.id),
            thread_id=str(thread) if thread else None,
            reply_to=str(message.message_id),
        )

    async def _message(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        message = update.message
        if message is None or message.from_user is None or message.from_user.is_bot:
            return
        kind = next((a for a in ATTACHMENTS if getattr(message, a, None)), None)
        await self._bridge.receive(
            InboundChat(
                route=self._route(message),
                sender_id=str(message.from_user.id),
                dedupe_keys=(
                    f"update:{update.update_id}",
                    f"message:{message.chat.id}:{message.message_id}",
                ),
                text=message.text if message.text is not None else None,
                is_direct=message.chat.type == "private",
                sender_name=message.from_user.full_name,
                message_ref=str(message.message_id),
                attachment_kind=kind,
            )
        )

    async def _callback(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        query = update.callback_query
        if query is None or query.data != STOP or not isinstance(query.message, Message):
            return
        await query.answer("Stopping\u2026")
        message = query.message
        route = self._route(message).home
        await self._bridge.receive(
            InboundChat(
                route=route,
                sender_id=str(query.from_user.id),
                dedupe_keys=(f"update:{update.update_id}",),
                text="/stop",
                is_direct=message.chat.type == "private",
                message_ref=f"button {query.id}",
            )
        )
