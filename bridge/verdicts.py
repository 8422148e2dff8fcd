"""What becomes of one chat message (DESIGN §3, Ingress), decided without I/O: from the
message, its sender's trust and what was read of its conversation beforehand, one verdict of
a closed set. `bridge/ingress.py` reads, calls `decide`, and applies the verdict; the audit
records of a message not passed on (ignored, refused, rejected) are made here, for every
writer of them."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from bridge import texts
from bridge.bindings import addressed, names_the_bot, respond_to
from bridge.commands import Command, UnknownCommand, parse
from bridge.events import InboundIgnored, InboundRefused, InboundRejected
from bridge.store import NotificationPost
from bridge.trust import Refused, Trusted
from bridge.types import InboundChat
from config.schema import WorkspaceConfig

MAX_PROMPT_CHARS = 50_000
REFUSAL_REPLY_INTERVAL_S = 3600.0  # a stranger is told they are one at most this often


class Outcome(StrEnum):
    """What `Bridge.receive` tells the adapter became of a message."""

    DUPLICATE = "duplicate"
    REFUSED = "refused"
    IGNORED = "ignored"  # group chatter not addressed to the bot: recorded, not answered
    REJECTED = "rejected"
    COMMAND = "command"
    PROMPT = "prompt"


@dataclass(frozen=True, slots=True)
class Seen:
    """What `decide` needs of the message's surroundings, read before it (of a copy handled
    before, nothing more than that)."""

    duplicate: bool  # its platform ids were handled before
    in_agent_thread: bool = False  # its conversation (or thread) is a session's already
    notification: NotificationPost | None = None  # an operator's: the notification it answers
    notification_live: bool = False  # that notification's session still exists
    held_back: bool = False  # it waits for its files, or behind a message here that does
    pairing: bool = False  # this bridge pairs strangers (where their workspace enables it)


@dataclass(frozen=True, slots=True)
class Duplicate:
    """Handled before (a platform's retry, or a copy racing the original): nothing to do."""


@dataclass(frozen=True, slots=True)
class Ignore:
    """Group chatter that is none of the bot's business: recorded, not answered."""

    reason: str
    operator: bool  # said by an operator (for the metric)


@dataclass(frozen=True, slots=True)
class Refuse:
    """Not from an operator here: recorded, and the sender told (at most once an hour)."""

    reason: str
    answer: str | None  # what they are told; None: no workspace of ours, told nothing


@dataclass(frozen=True, slots=True)
class Pair:
    """A stranger's DM where their workspace pairs: a pairing code instead of the refusal."""

    reason: str
    workspace: WorkspaceConfig


@dataclass(frozen=True, slots=True)
class Reject:
    """An operator's message the agent cannot take: recorded, and the operator told why."""

    reason: str  # the record's: notification_gone, button_gone, non_text, empty
    answer: str


@dataclass(frozen=True, slots=True)
class RunCommand:
    command: Command | UnknownCommand
    sender: Trusted
    notification: NotificationPost | None  # a command about that notification's session


@dataclass(frozen=True, slots=True)
class Hold:
    """An operator's message held until its files are in (or behind one that is)."""

    sender: Trusted
    notification: NotificationPost | None


@dataclass(frozen=True, slots=True)
class Prompt:
    """An operator's words for the agent (of the notification it answers, if any)."""

    sender: Trusted
    notification: NotificationPost | None
    words: str  # at most MAX_PROMPT_CHARS
    cut_notice: str | None  # what the operator is told when their words were cut


Verdict = Duplicate | Ignore | Refuse | Pair | Reject | RunCommand | Hold | Prompt


def decide(chat: InboundChat, sender: Trusted | Refused, seen: Seen) -> Verdict:
    if seen.duplicate:
        return Duplicate()
    unaddressed = _unaddressed(chat, sender, seen)
    if unaddressed is not None:
        return Ignore(unaddressed, operator=isinstance(sender, Trusted))
    if isinstance(sender, Refused):
        return _refusal(chat, sender, seen)
    return _for_the_agent(chat, sender, seen)


def stranger(sender: Trusted | Refused) -> bool:
    """Refused as someone who is not an operator of a workspace (not: in a chat not allowed)."""
    return (
        isinstance(sender, Refused)
        and sender.workspace is not None
        and not sender.operator_elsewhere
    )


def refusal_due(replied_at: float | None, now: float) -> bool:
    """Whether a refused sender last told so at `replied_at` (None: never) is told again."""
    return replied_at is None or now - replied_at >= REFUSAL_REPLY_INTERVAL_S


def _unaddressed(chat: InboundChat, sender: Trusted | Refused, seen: Seen) -> str | None:
    """Why a group or channel message is none of the bot's business, or None. A stranger
    there is refused only when they speak to the bot; an operator is heard as the admin's
    `respond_to` says (their commands, and their answers to a notification, always). DMs
    are always for the bot."""
    if chat.is_direct:
        return None
    in_agent_thread = seen.in_agent_thread
    if isinstance(sender, Refused):
        if not stranger(sender) or names_the_bot(chat, in_agent_thread=in_agent_thread):
            return None
        return "a stranger's message, not addressed to the bot"
    if seen.notification is not None or (chat.text is not None and parse(chat.text) is not None):
        return None
    wanted = respond_to(sender.workspace, chat.route)
    if addressed(chat, wanted, in_agent_thread=in_agent_thread):
        return None
    return f"not addressed to the bot (respond_to: {', '.join(wanted)})"


def _refusal(chat: InboundChat, sender: Refused, seen: Seen) -> Refuse | Pair:
    """A DM from someone who is not an operator, where the workspace pairs, gets a pairing
    code instead of the refusal. Groups and channels never pair, and a press on one of the
    bot's buttons is no request to pair, wherever it is."""
    workspace = sender.workspace
    if workspace is None:
        return Refuse(sender.reason, None)
    pairs = seen.pairing and workspace.pairing.enabled
    if pairs and chat.is_direct and not chat.pressed and stranger(sender):
        return Pair(sender.reason, workspace)
    answer = texts.NOT_ALLOWED_HERE if sender.operator_elsewhere else texts.NOT_AN_OPERATOR
    return Refuse(sender.reason, answer)


def _for_the_agent(chat: InboundChat, sender: Trusted, seen: Seen) -> Verdict:
    notification = seen.notification
    if notification is not None and not seen.notification_live:
        return Reject("notification_gone", texts.NOTIFICATION_GONE)
    if seen.held_back:  # held for files, in order
        return Hold(sender, notification)
    if chat.button is not None and chat.text is None:  # a button whose command is unknown
        return Reject("button_gone", texts.BUTTON_GONE)
    if chat.text is None:
        kind = chat.attachment_kind or "attachment"
        return Reject("non_text", texts.NOT_TEXT.format(kind=kind))
    if not chat.text.strip() and not chat.context:  # a forward alone has no words
        return Reject("empty", texts.EMPTY)
    command = parse(chat.text)
    if command is not None:
        return RunCommand(command, sender, notification)
    words, notice = chat.text, None
    if len(words) > MAX_PROMPT_CHARS:
        notice = texts.TRUNCATED.format(length=len(words), limit=MAX_PROMPT_CHARS)
        words = words[:MAX_PROMPT_CHARS]
    return Prompt(sender, notification, words, notice)


# -- the records of a message not passed on ------------------------------------------------


def ignored(chat: InboundChat, reason: str) -> InboundIgnored:
    route = chat.route
    return InboundIgnored(
        platform=route.platform,
        workspace_id=route.workspace_id,
        sender_id=chat.sender_id,
        conversation_id=route.conversation_id,
        reason=reason,
    )


def refused(chat: InboundChat, reason: str, *, replied: bool) -> InboundRefused:
    route = chat.route
    return InboundRefused(
        platform=route.platform,
        workspace_id=route.workspace_id,
        sender_id=chat.sender_id,
        conversation_id=route.conversation_id,
        reason=reason,
        replied=replied,
    )


def rejected(chat: InboundChat, reason: str) -> InboundRejected:
    return InboundRejected(
        platform=chat.route.platform,
        workspace_id=chat.route.workspace_id,
        sender_id=chat.sender_id,
        reason=reason,
    )
