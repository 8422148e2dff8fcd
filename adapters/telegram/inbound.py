"""Telegram updates to the bridge's `InboundChat`: which updates are for us, and where a reply
goes. Pure translation, no I/O, so every rule here is testable on its own.

A forum topic is its own session, answered in that topic; any other chat is one session.
"""

from __future__ import annotations

from typing import Any

from telegram import Message, Update

from adapters.telegram.platform import NAME
from bridge import FileKind, InboundChat, InboundFile, Route

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


def files(message: Message) -> tuple[InboundFile, ...]:
    """The files of `message` as Telegram describes them. A photo comes in several sizes,
    smallest first: the largest is offered, with the others to fall back on. An animation
    also carries a `document` (for old clients): it is one animation."""
    if message.photo:
        largest, *rest = reversed(message.photo)
        smaller = tuple(InboundFile(p.file_id, FileKind.PHOTO, size=p.file_size) for p in rest)
        return (
            InboundFile(largest.file_id, FileKind.PHOTO, size=largest.file_size, smaller=smaller),
        )
    found: list[InboundFile] = []
    kinds: list[tuple[FileKind, Any]] = [
        (FileKind.ANIMATION, message.animation),
        (FileKind.DOCUMENT, None if message.animation else message.document),
        (FileKind.VOICE, message.voice),
        (FileKind.AUDIO, message.audio),
        (FileKind.VIDEO, message.video),
        (FileKind.VIDEO_NOTE, message.video_note),
    ]
    for kind, media in kinds:
        if media is not None:
            found.append(
                InboundFile(
                    media.file_id,
                    kind,
                    name=getattr(media, "file_name", None),
                    mime_type=getattr(media, "mime_type", None),
                    size=media.file_size,
                )
            )
    return tuple(found)


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
        text=message.text if message.text is not None else message.caption,
        is_direct=message.chat.type == "private",
        sender_name=message.from_user.full_name,
        message_ref=str(message.message_id),
        attachment_kind=kind,
        files=files(message),
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
