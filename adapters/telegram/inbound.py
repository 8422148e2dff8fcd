"""Telegram updates to the bridge's `InboundChat`: which updates are for us, and where a reply
goes. Pure translation, no I/O, so every rule here is testable on its own.

A forum topic is its own session, answered in that topic; any other chat is one session.
"""

from __future__ import annotations

from telegram import Message, Update

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


def message_chat(update: Update, *, workspace_id: str) -> InboundChat | None:
    """A new message as a chat message, or None when it is no person's (a bot's, or none)."""
    message = update.message
    if message is None or message.from_user is None or message.from_user.is_bot:
        return None
    kind = next((a for a in ATTACHMENTS if getattr(message, a, None)), None)
    return InboundChat(
        route=route(message, workspace_id=workspace_id),
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
