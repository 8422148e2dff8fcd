"""One bot for one workspace: the updates the doors stored (a webhook's, or polled:
`polling.py`) are fed in by the replay (`decode`), each turned into the
bridge's InboundChat (inbound.py) and handed to it. Thin: trust, dedupe, routing, retries and
chunk sizes are the bridge's."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Coroutine
from typing import Any

from telegram import BotCommand, CallbackQuery, Update
from telegram.error import InvalidToken, NetworkError, TelegramError
from telegram.ext import Application, CallbackQueryHandler, ContextTypes, MessageHandler, filters

from adapters.telegram.files import TelegramFiles, file_base_url
from adapters.telegram.inbound import BotUser, message_button_chat, message_chat, stop_chat
from adapters.telegram.settings import TELEGRAM_SECTION
from adapters.telegram.transport import TelegramTransport
from adapters.telegram.updates import parse_update
from bridge import cancel_and_wait
from bridge.commands import menu as command_menu
from bridge.service import Bridge
from bridge.store.records import StoredRequest
from bridge.verdicts import Outcome
from config.errors import ConfigError, PlatformUnreachable
from config.schema import WorkspaceConfig

log = logging.getLogger(__name__)

NOT_STARTED = (
    "telegram.bot_token was not checked and this bot did not start (Switchboard does not keep "
    "trying). Once this machine reaches Telegram (check its network, a proxy, or "
    "telegram.api_base_url), start Switchboard again (or, if it runs on, reload)."
)


class TelegramAdapter:
    def __init__(self, bridge: Bridge, workspace: WorkspaceConfig) -> None:
        settings = TELEGRAM_SECTION.of(workspace)
        assert settings is not None
        self._bridge = bridge
        self.workspace = workspace
        self.settings = settings
        self.application = (
            Application.builder()
            .token(self.settings.bot_token.get_secret_value())
            .base_url(self.settings.api_base_url)
            .base_file_url(file_base_url(self.settings.api_base_url))
            .updater(None)  # updates come in through `feed`, from what the doors stored
            .build()
        )
        self.application.add_handler(MessageHandler(filters.UpdateType.MESSAGE, self._message))
        self.application.add_handler(CallbackQueryHandler(self._callback))
        self.transport = TelegramTransport(self.application)
        self.me: BotUser | None = None  # from getMe, once started
        self._background: set[asyncio.Task[Any]] = set()
        self.files = TelegramFiles(self.application)

    async def start(self, public_url: str | None) -> None:
        """Ask Telegram who the bot is and start it. A token Telegram refuses is a ConfigError;
        a Telegram that cannot be reached is PlatformUnreachable (the token was not checked).
        Either way the bot does not start, and nothing tries again until a restart or reload."""
        where = f"workspace {self.workspace.id}"
        url = self.settings.api_base_url
        try:
            await self._start(public_url)
        except InvalidToken:  # PTB's message quotes the token: not passed on
            raise ConfigError(
                f"{where}: Telegram at {url} refused the bot token (Unauthorized). Check "
                "telegram.bot_token and telegram.api_base_url."
            ) from None
        except NetworkError as exc:  # no connection, a timeout, a 5xx
            raise PlatformUnreachable(
                "Telegram", url, exc.message, where=where, then=NOT_STARTED
            ) from None
        except TelegramError as exc:
            raise ConfigError(
                f"{where}: Telegram at {url} answered {exc.message!r} while the bot started. "
                "Check telegram.bot_token and telegram.api_base_url."
            ) from None

    async def _start(self, public_url: str | None) -> None:
        await self.application.initialize()  # getMe: who the bot is
        bot = self.application.bot
        self.me = BotUser(bot.id, bot.username)
        await bot.set_my_commands([BotCommand(name, about) for name, about in command_menu()])
        await self.application.start()
        if self.settings.mode == "webhook" and public_url:
            secret = self.settings.webhook_secret
            await self.application.bot.set_webhook(
                f"{public_url.rstrip('/')}/telegram/{self.workspace.id}",
                secret_token=secret.get_secret_value() if secret else None,
            )

    async def stop(self) -> None:
        await cancel_and_wait(*self._background)
        if self.application.running:
            await self.application.stop()
        await self.application.shutdown()

    @property
    def running(self) -> bool:
        return self.application.running

    async def decode(self, request: StoredRequest) -> None:
        """An update its door stored, read with python-telegram-bot (one it cannot read is
        refused here, with a log line) and fed to the handlers."""
        update = parse_update(json.loads(request.body), self.application.bot)
        if isinstance(update, str):  # the door checks the shape, not all PTB reads
            fields = {"workspace": self.workspace.id, "reason": update}
            log.warning("telegram update refused", extra=fields)
            return
        await self.feed(update)

    async def feed(self, update: Update) -> None:
        """An update a door stored, handled by the bridge before this returns. A failure is
        raised: the intake keeps the update and the replay hands it over again."""
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
        chat = message_chat(update, workspace_id=self.workspace.id, bot=self.me)
        if chat is not None and await self._bridge.receive(chat) is Outcome.PROMPT:
            budget = self._bridge.budget(chat.route)
            self._later(self.transport.received(chat.route, budget))

    async def _callback(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """A button press is stored like any update, then answered (see `_answer`)."""
        query = update.callback_query
        stop = stop_chat(update, workspace_id=self.workspace.id)
        chat = stop or message_button_chat(update, workspace_id=self.workspace.id)
        if query is None or chat is None:
            return
        await self._bridge.receive(chat)
        # A button other than Stop is answered with a message, once the bridge decides.
        self._later(self._answer(query, "Stopping\u2026" if stop is not None else None))

    async def _answer(self, query: CallbackQuery, text: str | None) -> None:
        """Answer a stored press: this only stops the spinner on the client, so it is best
        effort. Telegram refuses it once the press is some seconds old ("query is too old"):
        that neither undoes the press nor holds any other update up."""
        try:
            await query.answer(text)
        except TelegramError as exc:
            log.warning(
                "telegram button press not answered",
                extra={"workspace": self.workspace.id, "error": str(exc)},
            )

    def _later(self, work: Coroutine[Any, Any, None]) -> None:
        """Work that must not hold up the next update (the reaction on receipt)."""
        task = asyncio.get_running_loop().create_task(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
