"""Telegram updates to the bridge's `InboundChat`: which updates are for us, and where a reply
goes. Pure translation, no I/O, so every rule here is testable on its own.

A forum topic is its own session, answered in that topic; any other chat is one session.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from telegram import (
    Chat,
    Message,
    MessageEntity,
    MessageOrigin,
    MessageOriginChannel,
    MessageOriginChat,
    MessageOriginHiddenUser,
    MessageOriginUser,
    Update,
)

from adapters.telegram.platform import NAME
from bridge.types import FileKind, InboundChat, InboundFile, Quoted, Route, Via

STOP = "stop"  # the callback data of a progress message's Stop button
# The callback data of a notification's buttons, and the command each one is.
NOTIFICATION_BUTTONS = {"notification_stop": "/stop", "notification_status": "/status"}
# The callback data of an approval request's buttons, and the command each one is.
APPROVAL_BUTTONS = {"approval_approve": "/approve", "approval_deny": "/deny"}
MESSAGE_BUTTONS = {**NOTIFICATION_BUTTONS, **APPROVAL_BUTTONS}
# The callback data of a button under a command's answer: `cmd:<place>:<delivery>`, its place
# among the buttons of the delivery that showed it (the command is kept with that delivery).
# callback_data holds 1-64 bytes: the bridge's ids of deliveries with buttons are at most 32
# (`dlv_` and 28 hex). `cmd:<place>` alone: a button posted before presses named it.
COMMAND_BUTTON = "cmd:"
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
    """(mentions the bot, replies to one of its messages, a command for another bot). A
    forward's mentions and commands are its author's, not the operator's."""
    if bot is None or message.forward_origin is not None:
        return False, False, False
    name = f"@{bot.username}".lower()
    mentions = for_another = False
    entities = message.parse_entities() or message.parse_caption_entities()  # a file's caption
    for entity, text in entities.items():
        named = entity.type == MessageEntity.MENTION and text.lower() == name
        if named or (entity.type == MessageEntity.TEXT_MENTION and _is(entity, bot)):
            mentions = True
        elif entity.type == MessageEntity.BOT_COMMAND and "@" in text:
            ours = text.lower().endswith(name)
            mentions = mentions or ours
            for_another = for_another or (entity.offset == 0 and not ours)
    replied = message.reply_to_message
    replies = (
        replied is not None
        and not _topic_root(message, replied)
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


def message_chat(
    update: Update, *, workspace_id: str, bot: BotUser | None = None
) -> InboundChat | None:
    """A new message as a chat message, or None when it is no person's (a bot's, or none) or
    a command for another bot (`/status@other_bot`). The bot's own @username is taken out of
    the text; `bot` also tells its own messages among those replied to. A forward's text is
    none of the operator's words: it comes as context, with its origin."""
    message = update.message
    if message is None or message.from_user is None or message.from_user.is_bot:
        return None
    mentions, replies, for_another = _addressing(message, bot)
    if for_another:
        return None
    kind = next((a for a in ATTACHMENTS if getattr(message, a, None)), None)
    replied_to, context = pointed_at(message, bot.id if bot else None)
    text = message.text if message.text is not None else message.caption
    passed_on = forward(message, bot.id if bot else None)
    if passed_on is not None:
        context, text = (*context, passed_on), ""
    elif message.forward_origin is not None:
        text = None  # a forward with no text (a sticker, a photo without a caption)
    if text and bot is not None and mentions and not text.startswith("/"):
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
        conversation_name=message.chat.title,
        message_ref=str(message.message_id),
        attachment_kind=kind,
        files=files(message),
        replied_to=replied_to,
        context=context,
        mentions_bot=mentions,
        replies_to_bot=replies,
    )


def pointed_at(message: Message, bot_id: int | None) -> tuple[str | None, tuple[Quoted, ...]]:
    """The message this one replies to (`<chat_id>:<message_id>`) and what it quotes of it:
    the part the operator quoted (`quote`), else its text or caption. A reply to a message of
    another chat (`external_reply`) brings only the quoted part, with its origin."""
    quote = message.quote.text if message.quote is not None else None
    replied = message.reply_to_message
    if replied is not None and not _topic_root(message, replied):
        text = quote or replied.text or replied.caption
        author = replied.from_user
        quoted = (
            Quoted(
                text,
                str(author.id) if author else None,
                author.full_name if author else _chat_name(replied),
                by_bot=author is not None and author.is_bot and author.id == bot_id,
                partial=quote is not None,
            )
            if text
            else None
        )
        return f"{message.chat.id}:{replied.message_id}", (quoted,) if quoted else ()
    if message.external_reply is not None and quote:
        author_id, name, place = _origin(message.external_reply.origin)
        return None, (Quoted(quote, author_id, name, partial=True, source=place),)
    return None, ()


def forward(message: Message, bot_id: int | None) -> Quoted | None:
    """What the operator forwarded (its text or caption), with who wrote it and where, as far
    as its `forward_origin` tells; None when it is no forward, or one without text."""
    origin = message.forward_origin
    text = message.text if message.text is not None else message.caption
    if origin is None or not text:
        return None
    author_id, name, place = _origin(origin)
    by_bot = bot_id is not None and author_id == str(bot_id)
    return Quoted(text, author_id, name, by_bot=by_bot, via=Via.FORWARD, source=place)


def _topic_root(message: Message, replied: Message) -> bool:
    """In a forum topic, Telegram sets `reply_to_message` to the topic's first message on
    every message that replies to nothing in particular."""
    return replied.forum_topic_created is not None or (
        message.is_topic_message is True and replied.message_id == message.message_thread_id
    )


def _chat_name(message: Message) -> str | None:
    chat = message.sender_chat
    return chat.title or chat.username if chat is not None else None


def _origin(origin: MessageOrigin) -> tuple[str | None, str | None, str | None]:
    """Who first wrote a message of another chat (user id, name) and where (a group or
    channel), as far as Telegram tells: a user who hides their account gives a name only, a
    group's anonymous admin or a channel post the chat and, if signed, the signature."""
    match origin:
        case MessageOriginUser(sender_user=user):
            return str(user.id), user.full_name, None
        case MessageOriginHiddenUser(sender_user_name=name):
            return None, name, None
        case MessageOriginChat(sender_chat=chat, author_signature=signature):
            return None, signature, _place(chat)
        case MessageOriginChannel(chat=chat, author_signature=signature):
            return None, signature, _place(chat)
    return None, None, None


def _place(chat: Chat) -> str:
    kind = "channel" if chat.type == Chat.CHANNEL else "group"
    named = f'the {kind} "{chat.title}"' if chat.title else f"a {kind}"
    return f"{named} (@{chat.username})" if chat.username else named


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
        mentions_bot=True,  # a press on the bot's own button is addressed to it
        pressed=True,
    )


def button_data(delivery_id: str, place: int) -> str:
    """The callback data of the button at `place` under a command's answer, as delivery
    `delivery_id` shows it."""
    return f"{COMMAND_BUTTON}{place}:{delivery_id}"


def _command_button(data: str) -> tuple[int, str | None] | None:
    """The place and the delivery a button's callback data names (None: one posted before
    presses named it); None when it is no button under a command's answer."""
    if not data.startswith(COMMAND_BUTTON):
        return None
    place, named, delivery_id = data.removeprefix(COMMAND_BUTTON).partition(":")
    if not place.isdecimal() or (named and not delivery_id):
        return None
    return int(place), delivery_id or None


def message_button_chat(update: Update, *, workspace_id: str) -> InboundChat | None:
    """A press of a notification's Stop or Status button, or of an approval request's Approve
    or Deny, as that command about what the message is (the bridge finds the agent or the
    request from the message the button is on); a press of a button under a command's
    answer, as its place there and the delivery that showed it (the bridge finds its command
    from that delivery); None for
    any other button, or one on a message the bot can no longer see."""
    query = update.callback_query
    if query is None or not isinstance(query.message, Message):
        return None
    command = MESSAGE_BUTTONS.get(query.data or "")
    pressed = _command_button(query.data or "")
    if command is None and pressed is None:
        return None
    place, delivery_id = pressed or (None, None)
    message = query.message
    return InboundChat(
        route=route(message, workspace_id=workspace_id),
        sender_id=str(query.from_user.id),
        dedupe_keys=(f"update:{update.update_id}",),
        text=command,
        is_direct=message.chat.type == "private",
        message_ref=f"button {query.id}",
        mentions_bot=True,  # a press on the bot's own button is addressed to it
        pressed=True,
        replied_to=f"{message.chat.id}:{message.message_id}",
        button=place,
        button_of=delivery_id,
    )
