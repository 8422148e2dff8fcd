"""One bot for one workspace: updates in by long polling or from the webhook route (see
front.py), each turned into the bridge's InboundChat (inbound.py) and stored. Thin: trust,
dedupe, routing, retries and chunk sizes are the bridge's."""

from __future__ import annotations

import asyncio
import logging

from telegram import BotCommand, Update
from telegram.error import TelegramError
from telegram.ext import Application, CallbackQueryHandler, ContextTypes, MessageHandler, filters

from adapters.telegram.files import TelegramFiles, file_base_url
from adapters.telegram.inbound import message_chat, stop_chat
from adapters.telegram.transport import TelegramTransport
from bridge import Bridge, InboundChat
from config.errors import ConfigError
from config.schema import WorkspaceConfig

log = logging.getLogger(__name__)

MAX_STORE_RETRY_S = 30.0  # a polled update the store did not take is tried again this often
COMMANDS = [
    BotCommand("stop", "stop what the agent is doing"),
    BotCommand("status", "what the agent is doing now"),
    BotCommand("queue", "how messages during a turn are handled"),
    BotCommand("new", "start a fresh session"),
    BotCommand("compact", "summarize the conversation to free the agent's memory"),
    BotCommand("help", "what I understand"),
]


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
            .base_file_url(file_base_url(self.settings.api_base_url))
        )
        if self.settings.mode == "webhook":
            builder = builder.updater(None)  # updates arrive through our own HTTP server
        self.application = builder.build()
        self.application.add_handler(MessageHandler(filters.UpdateType.MESSAGE, self._message))
        self.application.add_handler(CallbackQueryHandler(self._callback))
        self.transport = TelegramTransport(self.application)
        self.files = TelegramFiles(self.application)

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

    async def feed(self, update: Update) -> None:
        """An update from the webhook route (checked there), stored before this returns. A
        failure to store it is raised: the route answers 5xx and Telegram sends it again."""
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

    async def _message(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        chat = message_chat(update, workspace_id=self.workspace.id)
        if chat is not None:
            await self._store(chat)

    async def _callback(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        query, chat = update.callback_query, stop_chat(update, workspace_id=self.workspace.id)
        if query is None or chat is None:
            return
        await query.answer("Stopping\u2026")
        await self._store(chat)

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
