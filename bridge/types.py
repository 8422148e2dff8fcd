"""Transport-neutral chat types: what adapters hand the bridge and what it hands back."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict


def workspace_of_key(conversation_key: str) -> str:
    """The workspace of a conversation key (`Route.conversation_key`: platform, workspace,
    conversation, thread; a workspace id has no colon)."""
    return conversation_key.split(":", 2)[1]


class Route(BaseModel):
    """A place to post: platform, workspace, conversation, thread, and what to reply to."""

    model_config = ConfigDict(frozen=True)

    platform: str  # the adapter's `PlatformProfile.name`
    workspace_id: str
    conversation_id: str
    thread_id: str | None = None
    reply_to: str | None = None

    @property
    def home(self) -> Route:
        """The conversation itself, without the message this route happened to reply to."""
        return self.model_copy(update={"reply_to": None})

    @property
    def conversation_key(self) -> str:
        """One key per conversation (a DM, a channel thread, a forum topic): a session's home."""
        parts = [self.platform, self.workspace_id, self.conversation_id]
        return ":".join([*parts, self.thread_id] if self.thread_id else parts)

    @property
    def channel_key(self) -> str:
        """The chat or channel, whatever thread: platforms rate-limit posting per channel."""
        return ":".join([self.platform, self.workspace_id, self.conversation_id])

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


class FileKind(StrEnum):
    """What the platform says a file is; the bridge decides what reaches the model."""

    PHOTO = "photo"  # a picture the platform compressed (Telegram `photo`)
    DOCUMENT = "document"  # any file sent as a file: an image, a PDF, code, an archive
    VOICE = "voice"
    AUDIO = "audio"
    VIDEO = "video"
    VIDEO_NOTE = "video_note"
    ANIMATION = "animation"
    STICKER = "sticker"


@dataclass(frozen=True, slots=True)
class InboundFile:
    """A file that came with a message, as the platform describes it: nothing is downloaded
    until the bridge has decided the sender is trusted and the file is wanted."""

    file_id: str  # the platform's handle (Telegram `file_id`, Slack file id)
    kind: FileKind
    name: str | None = None
    mime_type: str | None = None
    size: int | None = None  # as the platform declares it
    url: str | None = None  # where the platform serves it (Slack `url_private_download`)
    smaller: tuple[InboundFile, ...] = ()  # the same picture in smaller sizes, largest first


class Via(StrEnum):
    """How text the operator did not write came with their message."""

    QUOTE = "quote"  # a message they replied to or quoted, or the thread they wrote in
    FORWARD = "forward"  # a message they forwarded (Telegram `forward_origin`)
    SHARE = "share"  # a message they shared or forwarded (Slack `is_share`)
    LINK_PREVIEW = "link_preview"  # the platform's preview of a link in their message


@dataclass(frozen=True, slots=True)
class Quoted:
    """A message the operator pointed at (replied to, quoted, or the thread around their
    words) or passed on (forwarded, shared, a link's preview), given to the model as context
    with its origin, never as the operator's instructions."""

    text: str
    author_id: str | None  # the platform's user id; None when the platform hides it
    author_name: str | None = None
    by_bot: bool = False  # written by this bot (its answer, a notification)
    partial: bool = False  # only the part the operator quoted
    via: Via = Via.QUOTE
    source: str | None = None  # where it was posted, as the platform names it (a chat, a URL)


@dataclass(frozen=True, slots=True)
class InboundChat:
    """One message from a chat platform, before any trust is given to it."""

    route: Route  # where it came from, and so where a reply goes
    sender_id: str
    dedupe_keys: tuple[str, ...]  # the platform's own ids (Slack event_id, Telegram update_id)
    text: str | None  # None: not a text message (a file, a sticker)
    is_direct: bool = False  # a DM / private chat
    sender_name: str | None = None
    conversation_name: str | None = None  # the chat's own name (a group's title), if given
    message_ref: str | None = None
    attachment_kind: str | None = None
    replied_to: str | None = None  # the message it answers, named as Transport.send names it
    context: tuple[Quoted, ...] = ()  # what the operator pointed at, oldest first
    wants_thread: bool = False  # the thread around it should be read for context
    # How it addresses the bot, for groups and channels (`respond_to`): it mentions the bot
    # (a Telegram @username, text mention or /command@bot; a Slack <@BOT>), it replies to one of
    # the bot's messages, or it is a reply inside a thread (the bot is in it if the agent has a
    # session there).
    mentions_bot: bool = False
    replies_to_bot: bool = False
    thread_reply: bool = False
    files: tuple[InboundFile, ...] = ()  # photos, documents, voice notes ... with the message
    # A press on one of the bot's buttons (as the command it is), not words the sender wrote:
    # a stranger's press is refused like their message, but it never asks to pair.
    pressed: bool = False
    # Which of the buttons under the bot's message `replied_to` was pressed (a command
    # reply's `Button`, by its place), and the delivery whose rendering of that message
    # showed it (None: a button posted before presses named it, found by the message's
    # delivery now): `text` is None until the bridge reads the command it stands for.
    button: int | None = None
    button_of: str | None = None


class DeliveryStatus(StrEnum):
    """Where an outgoing message (a delivery intent) stands."""

    PENDING = "pending"  # written, not tried yet
    SENDING = "sending"  # some parts may have gone; the rest are under way or retried
    ACCEPTED_BY_TRANSPORT = "accepted_by_transport"  # the platform took every part
    FAILED = "failed"  # given up: `last_error` says why and how many parts arrived


OPEN_DELIVERY = (DeliveryStatus.PENDING, DeliveryStatus.SENDING)


class DeliveryKind(StrEnum):
    TURN_RESULT = "turn_result"
    NOTIFICATION = "notification"
    APPROVAL = "approval"  # a tool call waits for an operator: Approve and Deny buttons
    PROGRESS = "progress"
    COMMAND_REPLY = "command_reply"


BUTTONED = (DeliveryKind.NOTIFICATION, DeliveryKind.APPROVAL)


@dataclass(frozen=True, slots=True)
class Button:
    """A button under a message: its label, and the command a press of it runs, exactly as if
    the operator who pressed it had typed that command there. Buttons of one `row` sit side
    by side (two at most, for a phone's width)."""

    label: str
    command: str
    row: int = 0


def button_rows(buttons: Sequence[Button]) -> list[list[tuple[int, Button]]]:
    """The buttons row by row, in order, each with its place among them all (what a press
    names)."""
    rows: list[list[tuple[int, Button]]] = []
    for place, button in enumerate(buttons):
        if rows and rows[-1][-1][1].row == button.row:
            rows[-1].append((place, button))
        else:
            rows.append([(place, button)])
    return rows


@dataclass(frozen=True, slots=True)
class Answer:
    """A command's answer with buttons under it (stored with its delivery, so a restart
    before it is sent keeps them)."""

    text: str
    buttons: tuple[Button, ...] = ()


@dataclass(frozen=True, slots=True)
class TransportLimits:
    """Facts about a platform the bridge needs for its own policy (DESIGN §1)."""

    max_chars: int
    per_conversation_interval_s: float = 0.0
    global_per_second: float = 0.0
    # A notification, an approval request or an answer with buttons carries them, and a
    # platform may hold less text beside them (a Slack section block: 3,000 characters);
    # None: `max_chars`.
    max_chars_with_buttons: int | None = None
    # Whether it shows buttons under a message (a terminal does not): where it does not, a
    # notice names the command a button would have run.
    buttons: bool = True

    def max_chars_for(self, kind: DeliveryKind, *, buttons: bool = False) -> int:
        """`buttons`: the message carries buttons of its own (`Button`), whatever its kind."""
        buttoned = buttons or kind in BUTTONED
        if buttoned and self.max_chars_with_buttons is not None:
            return self.max_chars_with_buttons
        return self.max_chars
