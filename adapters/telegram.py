"""Telegram through python-telegram-bot: updates in, messages and progress out. Thin: trust,
dedupe, routing, retries and chunk sizes are the bridge's; this file only translates."""

from __future__ import annotations

import html
import logging
import re
from datetime import timedelta
from typing import Any

from telegram import (
    BotCommand,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    Message,
    ReplyParameters,
    Update,
)
from telegram.constants import ChatAction, ParseMode
from telegram.error import BadRequest, Forbidden, NetworkError, RetryAfter, TelegramError, TimedOut
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


class TelegramTransport:
    platform = Platform.TELEGRAM
    # Telegram allows about 1 message/s per chat and 30/s per bot; keep a margin under both,
    # since a request's arrival time at Telegram varies by a few tens of milliseconds.
    limits = TransportLimits(
        max_chars=4096, per_conversation_interval_s=1.1, global_per_second=25.0
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
            wait = exc.retry_after
            seconds = wait.total_seconds() if isinstance(wait, timedelta) else float(wait)
            raise DeliveryError(
                f"Telegram 429: retry after {seconds:g}s", retryable=True, retry_after=seconds
            ) from exc
        except Forbidden as exc:
            raise DeliveryError(
                f"Telegram 403: {exc.message}", retryable=False, route_gone=True
            ) from exc
        except TimedOut as exc:
            raise DeliveryError("Telegram timed out", retryable=True, landed="unknown") from exc
        except BadRequest as exc:
            raise DeliveryError(f"Telegram 400: {exc.message}", retryable=False) from exc
        except NetworkError as exc:
            raise DeliveryError(
                f"Telegram unreachable: {exc.message}", retryable=True, landed="unknown"
            ) from exc

    async def delivered(self, route: Route, intent_id: str, chunk: int) -> bool | None:
        return None  # the Bot API cannot look up a chat's messages

    async def show_progress(self, route: Route, view: ProgressView | None) -> None:
        key = route.conversation_key
        chat_id = int(route.conversation_id)
        thread = int(route.thread_id) if route.thread_id else None
        shown = self._progress.get(key)
        try:
            if view is None:
                if shown is not None:
                    del self._progress[key]
                    await shown.delete()
                return
            await self._app.bot.send_chat_action(
                chat_id, ChatAction.TYPING, message_thread_id=thread
            )
            text = f"\u23f3 {view.step} ({view.elapsed_s:.0f}s)"
            if view.note:
                text += f"\n{view.note}"
            stop = InlineKeyboardMarkup([[InlineKeyboardButton("Stop", callback_data=STOP)]])
            if shown is None:
                self._progress[key] = await self._app.bot.send_message(
                    chat_id, text, message_thread_id=thread, reply_markup=stop
                )
            elif shown.text != text:
                edited = await shown.edit_text(text, reply_markup=stop)
                if isinstance(edited, Message):
                    self._progress[key] = edited
        except TelegramError as exc:
            log.info("progress not shown", extra={"conversation": key, "error": str(exc)})


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

    async def feed(self, data: dict[str, Any]) -> None:
        """An update from the webhook route."""
        update = Update.de_json(data, self.application.bot)
        await self.application.process_update(update)

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
