"""Telegram updates to the bridge's `InboundChat`: which updates are for us, and where a reply
goes. Pure translation, no I/O, so every rule here is testable on its own.

A forum topic is its own session, answered in that topic; any other chat is one session.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from telegram import Message, MessageEntity, Update

from adapters.telegram.platform import NAME
from bridge import InboundChat, Route

STOP = "stop"  # the callback data of a progress message's Stop button
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


@dataclass(frozen=True, slots=True)
class BotUser:
    """Who the bot is, from `getMe`: how a message mentions or replies to it."""

    id: int
    username: str


def _addressing(message: Message, bot: BotUser | None) -> tuple[bool, bool, bool]:
    """(mentions the bot, replies to one of its messages, a command for another bot)."""
    if bot is None:
        return False, False, False
    name = f"@{bot.username}".lower()
    mentions = for_another = False
    for entity, text in message.parse_entities().items():
        named = entity.type == MessageEntity.MENTION and text.lower() == name
        if named or (entity.type == MessageEntity.TEXT_MENTION and _is(entity, bot)):
            mentions = True
        elif entity.type == MessageEntity.BOT_COMMAND and "@" in text:
            ours = text.lower().endswith(name)
            mentions = mentions or ours
            for_another = for_another or (entity.offset == 0 and not ours)
    replied = message.reply_to_message
    # In a forum topic, a message that replies to nothing still points at the topic's start.
    replies = (
        replied is not None
        and replied.forum_topic_created is None
        and replied.from_user is not None
        and replied.from_user.id == bot.id
    )
    return mentions, replies, for_another


def _is(entity: MessageEntity, bot: BotUser) -> bool:
    return entity.user is not None and entity.user.id == bot.id


def route(message: Message, *, workspace_id: str) -> Route:
    """Where the answer to `message` goes: its chat, its topic if any, quoting it."""
    thread = message.message_thread_id if message.is_topic_message else None
    return Route(
        platform=NAME,
        workspace_id=workspace_id,
        conversation_id=str(message.chat.id),
        thread_id=str(thread) if thread else None,
        reply_to=str(message.message_id),
    )


def message_chat(
    update: Update, *, workspace_id: str, bot: BotUser | None = None
) -> InboundChat | None:
    """A new message as a chat message, or None when it is no person's (a bot's, or none) or
    a command for another bot (`/status@other_bot`). The bot's own @username is taken out of
    the text."""
    message = update.message
    if message is None or message.from_user is None or message.from_user.is_bot:
        return None
    mentions, replies, for_another = _addressing(message, bot)
    if for_another:
        return None
    kind = next((a for a in ATTACHMENTS if getattr(message, a, None)), None)
    text = message.text
    if text is not None and bot is not None and mentions and not text.startswith("/"):
        text = re.sub(rf"@{re.escape(bot.username)}\b", "", text, flags=re.IGNORECASE).strip()
    return InboundChat(
        route=route(message, workspace_id=workspace_id),
        sender_id=str(message.from_user.id),
        dedupe_keys=(
            f"update:{update.update_id}",
            f"message:{message.chat.id}:{message.message_id}",
        ),
        text=text,
        is_direct=message.chat.type == "private",
        sender_name=message.from_user.full_name,
        message_ref=str(message.message_id),
        attachment_kind=kind,
        mentions_bot=mentions,
        replies_to_bot=replies,
    )


def stop_chat(update: Update, *, workspace_id: str) -> InboundChat | None:
    """A click on the Stop button of a progress message, as the `/stop` command; None for any
    other button, or one on a message the bot can no longer see."""
    query = update.callback_query
    if query is None or query.data != STOP or not isinstance(query.message, Message):
        return None
    message = query.message
    return InboundChat(
        route=route(message, workspace_id=workspace_id).home,
        sender_id=str(query.from_user.id),
        dedupe_keys=(f"update:{update.update_id}",),
        text="/stop",
        is_direct=message.chat.type == "private",
        message_ref=f"button {query.id}",
    )
