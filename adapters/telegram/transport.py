"""Replies and progress out through python-telegram-bot, paced by the bridge; Telegram's
errors mapped to the bridge's once."""

from __future__ import annotations

import html
import logging
import re
from typing import Any, Literal

import httpx
from telegram import (
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    ReactionTypeEmoji,
    ReplyParameters,
)
from telegram.constants import ParseMode
from telegram.error import BadRequest, Forbidden, NetworkError, RetryAfter, TelegramError
from telegram.ext import Application

from adapters.telegram.inbound import APPROVAL_BUTTONS, NOTIFICATION_BUTTONS, button_data
from adapters.telegram.platform import TELEGRAM
from adapters.telegram.progress import TelegramProgress, retry_after_s, within
from bridge.platform import PlatformProfile
from bridge.ratelimit import ProgressBudget
from bridge.transport import Budget, Call, DeliveryError, Post, ProgressView
from bridge.types import DeliveryKind, Route, button_rows

log = logging.getLogger(__name__)


def _plain(rendered: str) -> str:
    """The text of rendered HTML, for when Telegram refuses its entities."""
    return html.unescape(re.sub(r"<[^>]+>", "", rendered))


RECEIVED = "\U0001f440"  # eyes: one of the reactions Telegram lets a bot set
# python-telegram-bot raises these (as TimedOut or NetworkError) when the request never left:
# no connection could be made, or no pooled connection came free.
NEVER_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)


def _keyboard(buttons: dict[str, str], labels: tuple[str, ...]) -> InlineKeyboardMarkup:
    row = [
        InlineKeyboardButton(label, callback_data=data)
        for data, label in zip(buttons, labels, strict=True)
    ]
    return InlineKeyboardMarkup([row])


# The buttons a message carries on its first part: a notification's stop the agent that
# raised it or show its status; an approval request's answer it.
KEYBOARDS = {
    DeliveryKind.NOTIFICATION: _keyboard(NOTIFICATION_BUTTONS, ("Stop", "Status")),
    DeliveryKind.APPROVAL: _keyboard(APPROVAL_BUTTONS, ("\u2705 Approve", "\u274c Deny")),
}


def _markup(post: Post) -> InlineKeyboardMarkup | None:
    """The keyboard of one part: its kind's buttons on the first, then the message's own
    buttons (a command's answer) in their rows, each sending its place and the post's
    delivery as callback data (a press runs what this rendering showed, whatever shows now)."""
    kind = post.kind
    rows = [list(row) for row in KEYBOARDS[kind].inline_keyboard] if kind in KEYBOARDS else []
    rows = rows if post.chunk == 0 else []
    rows += [
        [
            InlineKeyboardButton(b.label, callback_data=button_data(post.intent_id, place))
            for place, b in row
        ]
        for row in button_rows(post.buttons)
    ]
    return InlineKeyboardMarkup(rows) if rows else None


class TelegramTransport:
    """Replies, progress and typing through the bot, paced by the bridge (the profile's
    limits, in `adapters/telegram/platform.py`).

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

    profile: PlatformProfile = TELEGRAM

    def __init__(self, application: Application[Any, Any, Any, Any, Any, Any]) -> None:
        self._app = application
        self._live = TelegramProgress(lambda: application.bot)

    async def send(self, post: Post) -> str | None:
        route, text, intent_id, chunk = post.route, post.text, post.intent_id, post.chunk
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
        markup = _markup(post)
        if markup is not None:
            kwargs["reply_markup"] = markup
        try:
            try:
                sent = await self._app.bot.send_message(
                    text=text, parse_mode=ParseMode.HTML, **kwargs
                )
            except BadRequest as exc:
                if "can't parse entities" not in exc.message.lower():
                    raise
                log.warning(
                    "entities refused; sending plain text",
                    extra={"delivery_id": intent_id, "error": exc.message},
                )
                sent = await self._app.bot.send_message(text=_plain(text), **kwargs)
            return f"{sent.chat_id}:{sent.message_id}"
        except (RetryAfter, Forbidden, BadRequest, NetworkError) as exc:
            raise self._failure(exc) from exc

    async def rewrite(self, post: Post, message_id: str) -> None:
        """The bot's message `chat:message` shows `post` now: its text and its keyboard
        (`editMessageText`, the keyboard with it). Unchanged is done; one Telegram cannot
        find or edit any more is a failure not retried (the bridge posts it anew)."""
        chat_id, _, message = message_id.partition(":")
        kwargs: dict[str, Any] = {
            "chat_id": int(chat_id),
            "message_id": int(message),
            "reply_markup": _markup(post),
        }
        try:
            try:
                await self._app.bot.edit_message_text(
                    text=post.text, parse_mode=ParseMode.HTML, **kwargs
                )
            except BadRequest as exc:
                if "can't parse entities" not in exc.message.lower():
                    raise
                await self._app.bot.edit_message_text(text=_plain(post.text), **kwargs)
        except BadRequest as exc:
            if "message is not modified" in exc.message.lower():
                return  # it shows this already
            raise self._failure(exc) from exc
        except (RetryAfter, Forbidden, NetworkError) as exc:
            raise self._failure(exc) from exc

    def _failure(self, exc: TelegramError) -> DeliveryError:
        """A refused or failed call, as the bridge's DeliveryError."""
        if isinstance(exc, RetryAfter):
            seconds = self._wait_s(exc)
            return DeliveryError(
                f"Telegram 429: retry after {seconds:g}s", retryable=True, retry_after=seconds
            )
        if isinstance(exc, Forbidden):
            return DeliveryError(f"Telegram 403: {exc.message}", retryable=False, route_gone=True)
        if isinstance(exc, NetworkError) and not isinstance(exc, BadRequest):  # TimedOut too
            landed = self._landed(exc)
            what = "unreachable" if landed == "no" else "did not answer"
            return DeliveryError(f"Telegram {what}: {exc.message}", retryable=True, landed=landed)
        return DeliveryError(f"Telegram 400: {exc.message}", retryable=False)

    async def delivered(self, route: Route, intent_id: str, chunk: int) -> bool | None:
        return None  # the Bot API cannot look up a chat's messages

    async def received(self, route: Route, budget: ProgressBudget) -> None:
        """A reaction on the operator's message: the agent has it. Best effort, within the
        bot's limits (skipped when the budget has no room); a chat where reactions are off
        refuses it, and that is fine."""
        if route.reply_to is None:
            return
        try:
            await within(
                budget,
                Call.REACTION,
                lambda: self._app.bot.set_message_reaction(
                    int(route.conversation_id),
                    int(route.reply_to or 0),
                    [ReactionTypeEmoji(RECEIVED)],
                ),
            )
        except TelegramError as exc:
            log.info(
                "receipt reaction not set",
                extra={"conversation": route.conversation_key, "error": str(exc)},
            )
        finally:
            budget.done()

    async def show_progress(self, route: Route, view: ProgressView | None, budget: Budget) -> None:
        await self._live.show(route, view, budget)

    def live_messages(self, route: Route) -> frozenset[str]:
        return self._live.live_messages(route)

    async def remove_live(self, route: Route, message_id: str) -> None:
        await self._live.remove_live(route, message_id)

    @staticmethod
    def _wait_s(exc: RetryAfter) -> float:
        return retry_after_s(exc)

    @staticmethod
    def _landed(exc: NetworkError) -> Literal["no", "unknown"]:
        """Whether a failed request may have reached Telegram: "no" when it never left; a 5xx,
        a read or write timeout or a dropped connection leave it unknown."""
        return "no" if isinstance(exc.__cause__, NEVER_SENT) else "unknown"
