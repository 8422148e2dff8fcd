"""Slack payloads to the bridge's `InboundChat`: which events are for us, and where a reply
goes. Pure translation, no I/O, so every rule here is testable on its own.

A thread is a session. In a channel a top-level message starts one (the reply goes into its
thread); in a DM the top level is one session and each thread another.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from adapters.slack.platform import NAME
from bridge.types import FileKind, InboundChat, InboundFile, Quoted, Route, Via

STOP_ACTION = "switchboard_stop"
# A notification's buttons, and the command each one is.
NOTIFICATION_ACTIONS = {
    "switchboard_notification_stop": "/stop",
    "switchboard_notification_status": "/status",
}
# An approval request's buttons.
APPROVAL_ACTIONS = {"switchboard_approve": "/approve", "switchboard_deny": "/deny"}
# Buttons about the message they sit on (the bridge finds what it is from the message).
MESSAGE_ACTIONS = {**NOTIFICATION_ACTIONS, **APPROVAL_ACTIONS}
BUTTONS = {STOP_ACTION: "/stop", **MESSAGE_ACTIONS}  # the bot's buttons of one command each
# A button under a command's answer: its action id ends with its place among the buttons of
# the delivery that showed it, and its value is that delivery's id (the command is kept with
# it; a value holds 2,000 characters). A value that is the place itself: a button posted
# before presses named their delivery.
COMMAND_ACTION = re.compile(r"^switchboard_command_(\d+)$")


def action_of(place: int) -> str:
    """The action id of the button at `place` under a command's answer."""
    return f"switchboard_command_{place}"


# Plain messages, messages with files, and thread replies also sent to the channel. Everything
# else (edits, deletions, joins, bot messages, ...) is not an operator talking to the agent.
TALKING_SUBTYPES = {None, "file_share", "thread_broadcast"}


@dataclass(frozen=True, slots=True)
class BotIdentity:
    """Who the bot is in one Slack workspace, from `auth.test`."""

    team_id: str
    user_id: str
    bot_id: str


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def files(event: dict[str, Any]) -> tuple[InboundFile, ...]:
    """The files of a `file_share` message as Slack describes them. A file Slack only
    describes in part (`file_access: check_file_info`) has no URL: `files.info` gives it.
    A field of the wrong type is left out, never a crash."""
    found = []
    files = event.get("files")
    for f in files if isinstance(files, list) else []:
        if not isinstance(f, dict) or not _text(f.get("id")) or f.get("mode") == "tombstone":
            continue
        mime = _text(f.get("mimetype"))
        kind = FileKind.DOCUMENT
        if mime and mime.startswith("audio/"):
            kind = FileKind.AUDIO
        elif mime and mime.startswith("video/"):
            kind = FileKind.VIDEO
        size = f.get("size")
        found.append(
            InboundFile(
                str(f["id"]),
                kind,
                name=_text(f.get("name")) or _text(f.get("title")),
                mime_type=mime,
                size=size if isinstance(size, int) and not isinstance(size, bool) else None,
                url=_text(f.get("url_private_download")) or _text(f.get("url_private")),
            )
        )
    return tuple(found)


def passed_on(event: dict[str, Any], bot: BotIdentity) -> tuple[Quoted, ...]:
    """What a message carries that its sender did not write, with who wrote it and where, as
    far as Slack says: a message shared or forwarded into it (an attachment with `is_share`),
    and Slack's previews of the links in it (an unfurl names its link: `from_url`,
    `original_url`; a Slack message's preview names its author too). Other attachments are an
    app's own, and are left out."""
    found = []
    attachments = event.get("attachments")
    for a in attachments if isinstance(attachments, list) else []:
        if not isinstance(a, dict):
            continue
        share = a.get("is_share") is True
        url = _text(a.get("from_url")) or _text(a.get("original_url"))
        if not share and url is None:
            continue
        parts = (a.get("text"),) if share else (a.get("title"), a.get("text"))
        text = "\n".join(p for p in map(_text, parts) if p) or _text(a.get("fallback"))
        if text is None:
            continue
        channel = _text(a.get("channel_name"))
        found.append(
            Quoted(
                text,
                _text(a.get("author_id")),
                _text(a.get("author_name")) or _text(a.get("service_name")),
                by_bot=a.get("bot_id") == bot.bot_id or a.get("author_id") == bot.user_id,
                via=Via.SHARE if share else Via.LINK_PREVIEW,
                source=f"#{channel}" if share and channel else url,
            )
        )
    return tuple(found)


def message_chat(
    event: dict[str, Any],
    *,
    workspace_id: str,
    channels: list[str],
    bot: BotIdentity,
    event_id: str | None,
) -> InboundChat | None:
    """A `message` or `app_mention` event as a chat message, or None when it is not one
    the bot should answer: its own posts, other bots, edits and deletions, and chatter in a
    channel it was invited to but neither allowed in nor mentioned. Its text is the sender's
    words; what it shares or previews comes as context (`passed_on`)."""
    said = _said_by_someone(event, bot)
    if said is None:
        return None
    user, channel, ts = said
    text = str(event.get("text") or "")
    mention = f"<@{bot.user_id}>"
    is_direct = event.get("channel_type") == "im" or channel.startswith("D")
    mentioned = event.get("type") == "app_mention" or mention in text
    if not (is_direct or mentioned or channel in channels):
        return None
    thread, replied_to = _thread_of(event, channel, ts, is_direct)
    text = re.sub(rf"{re.escape(mention)}\s*", "", text).strip()
    attached = event.get("files") or []
    keys = (f"event:{event_id}",) if event_id else ()
    return InboundChat(
        route=Route(
            platform=NAME,
            workspace_id=workspace_id,
            conversation_id=channel,
            thread_id=thread,
            reply_to=ts,
        ),
        sender_id=user,
        dedupe_keys=(*keys, f"message:{channel}:{ts}"),
        text=None if attached and not text else text,
        is_direct=is_direct,
        message_ref=ts,
        attachment_kind="file" if attached else None,
        files=files(event),
        replied_to=replied_to,
        context=passed_on(event, bot),
        # Pulled into a channel's thread by a mention: what was said there is context.
        wants_thread=replied_to is not None and mentioned and not is_direct,
        mentions_bot=mentioned,
        thread_reply=replied_to is not None,
    )


def _said_by_someone(event: dict[str, Any], bot: BotIdentity) -> tuple[str, str, str] | None:
    """The sender, channel and ts of a message a person wrote, or None: the bot's own posts,
    other bots', edits and deletions, and events that lack one of the three."""
    if event.get("subtype") not in TALKING_SUBTYPES or event.get("bot_id"):
        return None
    user, channel, ts = event.get("user"), event.get("channel"), event.get("ts")
    if not user or user == bot.user_id or not channel or not ts:
        return None
    return user, channel, ts


def _thread_of(
    event: dict[str, Any], channel: str, ts: str, is_direct: bool
) -> tuple[str | None, str | None]:
    """The thread the reply goes into, and the message the event replies to (`channel:ts`
    of the thread's first message, a notification perhaps), if it is a reply in a thread."""
    thread = event.get("thread_ts") or (None if is_direct else ts)
    replied_to = f"{channel}:{thread}" if thread and thread != ts else None
    return thread, replied_to


def command_chat(command: dict[str, Any], *, workspace_id: str) -> InboundChat | None:
    """A slash command (`/switchboard queue collect`) as the chat command it carries
    (`/queue collect`); no words is `/help`. It names the channel it was typed in, no thread."""
    user, channel = command.get("user_id"), command.get("channel_id")
    if not isinstance(user, str) or not isinstance(channel, str) or not user or not channel:
        return None
    words = str(command.get("text") or "").strip().lstrip("/")
    return InboundChat(
        route=Route(platform=NAME, workspace_id=workspace_id, conversation_id=channel),
        sender_id=user,
        dedupe_keys=(f"command:{command.get('trigger_id')}",),
        text="/" + (words or "help"),
        is_direct=channel.startswith("D"),
        mentions_bot=True,
    )


def button_chat(body: dict[str, Any], *, workspace_id: str) -> InboundChat | None:
    """A press of one of the bot's buttons (a `block_actions` payload) as the command it is:
    the progress message's Stop (about the conversation's turn), a notification's Stop or
    Status (about the agent that raised it: the bridge finds it from the message pressed), an
    approval request's Approve or Deny (about that request, found the same way), or a button
    under a command's answer (as its place and the delivery its value names: the bridge
    finds its command there)."""
    channel = _text((body.get("channel") or {}).get("id"))
    message = body.get("message") or {}
    actions = body.get("actions") or []
    user = _text((body.get("user") or {}).get("id"))
    ts = _text(message.get("ts"))
    if not channel or not user or not actions or not ts or not isinstance(actions[0], dict):
        return None
    action = str(actions[0].get("action_id"))
    command = BUTTONS.get(action)
    placed = COMMAND_ACTION.match(action)
    if command is None and placed is None:
        return None
    on_message = action in MESSAGE_ACTIONS or placed is not None
    return InboundChat(
        route=Route(
            platform=NAME,
            workspace_id=workspace_id,
            conversation_id=channel,
            thread_id=_text(message.get("thread_ts")),
        ),
        sender_id=user,
        dedupe_keys=(f"action:{channel}:{ts}:{actions[0].get('action_ts')}",),
        text=command,
        is_direct=channel.startswith("D"),
        message_ref=f"button on {ts}",
        mentions_bot=True,  # a press on the bot's own button is addressed to it
        pressed=True,
        replied_to=f"{channel}:{ts}" if on_message else None,
        button=int(placed.group(1)) if placed else None,
        button_of=_delivery_of(actions[0]) if placed else None,
    )


def _delivery_of(action: dict[str, Any]) -> str | None:
    """The delivery a command button's value names; None for one posted before presses
    named it (its value is its place)."""
    value = _text(action.get("value"))
    return None if value is None or value.isdecimal() else value
