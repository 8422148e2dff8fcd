"""Conversations as people name them: "Telegram, DM with Alice", "Slack, #ops", "console".

What a platform tells of a conversation comes with each operator's message (`named`) and is
kept in the bridge store (`conversation_names`); the words are made here from that and the
conversation key, never by naming a platform: a platform whose one conversation bears its
own name (the terminal's) is called by that name."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from bridge import texts
from bridge.store.records import ConversationName
from bridge.types import InboundChat

# Control characters (C0, DEL, C1) and the bidirectional overrides: a group's title or a
# person's name is set by whoever is in the chat, and is printed in an admin's terminal by
# `switchboard status`, where an escape sequence would act rather than show.
UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
LONGEST_NAME = 128  # Telegram's longest chat title


def printable(name: str | None) -> str | None:
    """A name as it can be shown anywhere: its control characters dropped, at most 128."""
    if name is None:
        return None
    return UNPRINTABLE.sub("", name)[:LONGEST_NAME].strip() or None


def named(chat: InboundChat, operator_id: str) -> ConversationName:
    """What this operator's message tells of its conversation, to be kept with it."""
    return ConversationName(
        key=chat.route.home.conversation_key,
        workspace_id=chat.route.workspace_id,
        direct=chat.is_direct,
        title=printable(chat.conversation_name),
        person=printable(chat.sender_name),
        operator_id=operator_id,
    )


@dataclass(frozen=True, slots=True)
class Place:
    """Where a session lives, in words: `where` the conversation is, `who` wrote there last."""

    where: str
    who: str | None


NOWHERE = Place(texts.PLACE_NONE, None)


def place(key: str | None, names: Mapping[str, ConversationName]) -> Place:
    """The conversation with this key (`Route.conversation_key`) as people name it."""
    if not key:
        return NOWHERE
    platform, _, rest = key.partition(":")
    _, _, rest = rest.partition(":")  # the workspace: the reader knows it
    conversation, _, thread = rest.partition(":")
    name = names.get(key)
    who = (name.person or name.operator_id) if name is not None else None
    if conversation == platform:  # the platform is its one conversation (the terminal)
        return Place(platform, who)
    if name is not None and name.direct:
        body = texts.PLACE_DM.format(person=who)
    elif name is not None and name.title:
        body = name.title if name.title.startswith("#") else f"\u201c{name.title}\u201d"
    else:
        body = texts.PLACE_CHAT.format(id=conversation)
    if thread and not (name is not None and name.direct):
        body += texts.PLACE_THREAD
    return Place(f"{platform.capitalize()}, {body}", who)
