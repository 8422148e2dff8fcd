"""The live state of a running turn in a Telegram chat: the progress message with its Stop
button, the typing action, and the answer as it streams (DESIGN §3, Progress).

In a private chat the answer streams as a draft (`sendMessageDraft`: an animated preview that
Telegram replaces with the answer once the bridge sends it, and that lasts 30 s by itself), and
the progress message stays a status line with the Stop button. In a group or a forum topic,
where drafts are not offered, the answer streams in the progress message itself, edited: one
live message, never two. Each call only if the bridge's budget has room for it now.
"""

from __future__ import annotations

import html
import logging
import zlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import TypeVar

from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup, Message
from telegram.constants import ChatAction, ParseMode
from telegram.error import BadRequest, RetryAfter, TelegramError

from adapters import platform_calls
from adapters.telegram.inbound import STOP
from adapters.telegram.platform import TELEGRAM
from bridge import texts
from bridge.preview import tail
from bridge.transport import Budget, Call, ProgressView
from bridge.types import Route

log = logging.getLogger(__name__)

T = TypeVar("T")
MAX_TEXT = 4096
PREVIEW_CHARS = 3500  # of the answer's markdown, at most, in a preview
STOPPED = html.escape(texts.STREAM_STOPPED, quote=False)


@dataclass(frozen=True, slots=True)
class _Shown:
    message: Message
    text: str  # as sent (HTML)
    answer: str  # the answer's part of it, as sent


def retry_after_s(exc: RetryAfter) -> float:
    wait = exc.retry_after
    return wait.total_seconds() if isinstance(wait, timedelta) else float(wait)


def draft_id(run_id: str) -> int:
    """One draft a turn, so Telegram animates its changes; never zero."""
    return zlib.crc32(run_id.encode()) % (2**31 - 1) + 1


def preview(answer: str, reserve: int = 0) -> str:
    """The newest part of the answer, in Telegram's HTML, with room for `reserve` more."""

    def fits(markdown: str) -> bool:
        return len(TELEGRAM.render(markdown)) + reserve <= MAX_TEXT

    return TELEGRAM.render(tail(answer, fits, PREVIEW_CHARS))


class TelegramProgress:
    def __init__(self, bot: Callable[[], Bot]) -> None:
        self._bot = bot
        self._shown: dict[str, _Shown] = {}  # the progress message, by conversation
        self._drafts: dict[str, str] = {}  # the draft's text as sent, by conversation

    def live_messages(self, route: Route) -> frozenset[str]:
        shown = self._shown.get(route.conversation_key)
        return frozenset({str(shown.message.message_id)}) if shown else frozenset()

    async def remove_live(self, route: Route, message_id: str) -> None:
        try:
            await self._bot().delete_message(int(route.conversation_id), int(message_id))
        except BadRequest as exc:  # gone already, or too old to delete
            log.info("left-over progress not deleted", extra={"error": exc.message})

    async def show(self, route: Route, view: ProgressView | None, budget: Budget) -> None:
        key = route.conversation_key
        shown = self._shown.pop(key, None)
        try:
            if view is None:
                self._drafts.pop(key, None)
                if shown is not None and await within(budget, Call.DELETE, shown.message.delete):
                    shown = None
                return
            private = not route.conversation_id.startswith("-")
            if not view.stopped:
                await self._typing(route, budget)
            before = shown.message.message_id if shown is not None else None
            shown = await self._message(
                route, view, shown, budget, in_message=view.stopped or not private
            )
            posted = shown is not None and shown.message.message_id != before
            if shown is not None and posted:  # recorded before the next call (`Budget.posted`)
                self._shown[key] = shown
                await budget.posted()
            if private and not view.stopped and view.answer.strip():
                # A message sent to the chat takes a draft's place: the progress message is
                # posted first, and a new one (a first post, or one posted again) means the
                # draft must be sent again.
                if posted:
                    self._drafts.pop(key, None)
                await self._draft(route, view, budget)
            if view.stopped and shown is not None and shown.text.endswith(STOPPED):
                shown = None  # the stopped answer stays as it is: not ours to clear
        except BadRequest as exc:
            if "not modified" not in exc.message:
                shown = None  # e.g. someone deleted the progress message: post a new one
            log.info("progress not shown", extra={"conversation": key, "error": str(exc)})
        except TelegramError as exc:
            log.info("progress not shown", extra={"conversation": key, "error": str(exc)})
        finally:
            if shown is not None:
                self._shown[key] = shown
            else:
                self._shown.pop(key, None)

    async def _typing(self, route: Route, budget: Budget) -> None:
        thread = int(route.thread_id) if route.thread_id else None
        await within(
            budget,
            Call.INDICATOR,
            lambda: self._bot().send_chat_action(
                int(route.conversation_id), ChatAction.TYPING, message_thread_id=thread
            ),
        )

    async def _draft(self, route: Route, view: ProgressView, budget: Budget) -> None:
        key = route.conversation_key
        text = preview(view.answer)
        if not text or self._drafts.get(key) == text:
            return
        sent = await within(
            budget,
            Call.STREAM,
            lambda: self._bot().send_message_draft(
                int(route.conversation_id),
                draft_id(view.run_id),
                text,
                message_thread_id=int(route.thread_id) if route.thread_id else None,
                parse_mode=ParseMode.HTML,
            ),
        )
        if sent is not None:
            self._drafts[key] = text

    async def _message(
        self,
        route: Route,
        view: ProgressView,
        shown: _Shown | None,
        budget: Budget,
        *,
        in_message: bool,
    ) -> _Shown | None:
        """Post or edit the progress message (with the answer so far where `in_message`);
        what it shows now."""
        status = f"\u23f3 {view.step} ({view.elapsed_s:.0f}s)"
        if view.note:
            status += f"\n{view.note}"
        status = STOPPED if view.stopped else html.escape(status, quote=False)
        answer = view.answer if in_message and view.answer.strip() else ""
        text = f"{preview(answer, len(status) + 2)}\n\n{status}" if answer else status
        stop = InlineKeyboardMarkup([[InlineKeyboardButton("Stop", callback_data=STOP)]])
        markup = None if view.stopped else stop
        chat_id = int(route.conversation_id)
        thread = int(route.thread_id) if route.thread_id else None
        if shown is None:
            posted = await within(
                budget,
                Call.POST,
                lambda: self._bot().send_message(
                    chat_id,
                    text,
                    message_thread_id=thread,
                    reply_markup=markup,
                    parse_mode=ParseMode.HTML,
                ),
            )
            return _Shown(posted, text, answer) if posted is not None else None
        if shown.text == text:
            return shown
        message = shown.message
        # A group's answer streams as edits of this message (counted as the chat's messages
        # there); in a private chat the draft streams it, and an edit is one more message.
        group = route.conversation_id.startswith("-")
        edited = await within(
            budget,
            Call.STREAM if answer != shown.answer and group else Call.EDIT,
            lambda: message.edit_text(text, reply_markup=markup, parse_mode=ParseMode.HTML),
        )
        if isinstance(edited, Message):
            return _Shown(edited, text, answer)
        return shown


def asked_to_wait(exc: Exception) -> float | None:
    """Telegram's RetryAfter (a 429), and how long it asks."""
    return retry_after_s(exc) if isinstance(exc, RetryAfter) else None


async def within(budget: Budget, call: Call, request: Callable[[], Awaitable[T]]) -> T | None:
    """This progress call, within the bridge's budget (`adapters/platform_calls.py`)."""
    return await platform_calls.within(budget, call, request, asked_to_wait)
