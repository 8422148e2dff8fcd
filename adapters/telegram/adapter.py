"""One bot for one workspace: updates in by long polling or from the webhook route, each
turned into the bridge's InboundChat. Thin: trust, dedupe, routing, retries and chunk sizes
are the bridge's."""

from __future__ import annotations

import asyncio
import logging

from telegram import BotCommand, Message, Update
from telegram.error import TelegramError
from telegram.ext import Application, CallbackQueryHandler, ContextTypes, MessageHandler, filters

from adapters.telegram.transport import STOP, TelegramTransport
from bridge import Bridge, InboundChat, Platform, Route
from config.errors import ConfigError
from config.schema import WorkspaceConfig

log = logging.getLogger(__name__)

MAX_STORE_RETRY_S = 30.0  # a polled update the store did not take is tried again this often
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
        await self._store(
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
        await self._store(
            InboundChat(
                route=route,
                sender_id=str(query.from_user.id),
                dedupe_keys=(f"update:{update.update_id}",),
                text="/stop",
                is_direct=message.chat.type == "private",
                message_ref=f"button {query.id}",
            )
        )

    async def _store(self, chat: InboundChat) -> None:
        """Hand an update's message to the bridge, which stores it. A webhook update that
        cannot be stored is raised: the route answers 5xx and Telegram sends it again. A polled
        one was confirmed to Telegram when it was fetched, so it is tried again until the store
        takes it, holding the updates after it back, in order."""
        delay_s = 0.5
        while True:
            try:
                await self._bridge.receive(chat)
                return
            except Exception:
                if self.settings.mode == "webhook":
                    raise
                log.warning(
                    "telegram update not stored; trying again",
                    exc_info=True,
                    extra={"workspace": self.workspace.id, "delay_s": delay_s},
                )
                await asyncio.sleep(delay_s)
                delay_s = min(delay_s * 2, MAX_STORE_RETRY_S)
