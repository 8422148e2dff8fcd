"""What becomes of one chat message (DESIGN §3, Ingress), decided without I/O: from the
message, its sender's trust and everything read of its surroundings beforehand
(`bridge/facts.py`), one verdict of a closed set that holds all it does: the audit record, the
replies, the pairing step, the prompt for the agent. `bridge/ingress.py` reads, calls `decide`,
and writes the verdict in one transaction. A Slack slash command takes the same path; its
answer goes back to its sender alone."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from bridge import texts
from bridge.attachments.held import Addressee
from bridge.attachments.intake import FilesDecided, decide_files
from bridge.bindings import addressed, names_the_bot, respond_to
from bridge.commands import Command, CommandName, UnknownCommand
from bridge.events import InboundIgnored, InboundRefused, InboundRejected
from bridge.facts import Facts
from bridge.pairing import PairingStep, next_step
from bridge.prompt import operator_prompt
from bridge.trust import Refused, Trusted, sender_key, stranger
from bridge.types import Answer, InboundChat
from runtime.messages import InboundMessage

MAX_PROMPT_CHARS = 50_000
REFUSAL_REPLY_INTERVAL_S = 3600.0  # a stranger is told they are one at most this often

Record = InboundIgnored | InboundRefused | InboundRejected


class Outcome(StrEnum):
    """What `Bridge.receive` tells the adapter became of a message."""

    DUPLICATE = "duplicate"
    REFUSED = "refused"
    IGNORED = "ignored"  # group chatter not addressed to the bot: recorded, not answered
    REJECTED = "rejected"
    COMMAND = "command"
    PROMPT = "prompt"


@dataclass(frozen=True, slots=True)
class Effects:
    """What a message's transaction writes besides its platform ids."""

    record: Record | None = None  # its audit record
    replies: tuple[Answer, ...] = ()  # to its conversation (to its sender alone, privately)
    refusal_told: str | None = None  # the sender (`sender_key`) told now that they are refused
    pairing: PairingStep | None = None
    # Messages of the bot shown anew in place: (the platform's id of one, what it shows now).
    rewrites: tuple[tuple[str, Answer], ...] = ()


@dataclass(frozen=True, slots=True)
class Duplicate:
    """Handled before (a platform's retry, or a copy racing the original): nothing to do."""


@dataclass(frozen=True, slots=True)
class Ignore:
    """Group chatter that is none of the bot's business: recorded, not answered."""

    effects: Effects
    operator: bool  # said by an operator (for the metric)


@dataclass(frozen=True, slots=True)
class Refuse:
    """Not from an operator here: recorded, and the sender told (at most once an hour), or,
    where their workspace pairs, given a pairing code instead (`effects.pairing`)."""

    effects: Effects


@dataclass(frozen=True, slots=True)
class Reject:
    """An operator's message the agent cannot take: recorded, and the operator told why."""

    effects: Effects


@dataclass(frozen=True, slots=True)
class Tell:
    """A slash command answered without running one: its help, or that it is unknown."""

    answer: str


@dataclass(frozen=True, slots=True)
class RunCommand:
    command: Command | UnknownCommand
    sender: Trusted
    notification_session: str | None  # a command about that notification's session
    decision: tuple[str, str] | None = None  # what an /approve or /deny answers, pointed at


@dataclass(frozen=True, slots=True)
class Hold:
    """An operator's message held until its files are in (or behind one that is), or, with
    no file wanted and no words, passed on not at all (`decided.held` None)."""

    decided: FilesDecided


@dataclass(frozen=True, slots=True)
class Prompt:
    """An operator's words for the agent: its session (None: the conversation's, created
    now), the message, and what the operator is told at once."""

    sender: Trusted
    session_id: str | None
    message: InboundMessage
    effects: Effects = field(default_factory=Effects)
    cut_from: int | None = None  # the length of words that were cut to MAX_PROMPT_CHARS


Verdict = Duplicate | Ignore | Refuse | Reject | Tell | RunCommand | Hold | Prompt


def decide(chat: InboundChat, sender: Trusted | Refused, facts: Facts) -> Verdict:
    if facts.private is not None:
        return _private(chat, sender, facts)
    if facts.duplicate:
        return Duplicate()
    unaddressed = _unaddressed(chat, sender, facts)
    if unaddressed is not None:
        return Ignore(Effects(ignored(chat, unaddressed)), operator=isinstance(sender, Trusted))
    if isinstance(sender, Refused):
        return _refusal(chat, sender, facts)
    return _for_the_agent(chat, sender, facts)


def refusal_due(replied_at: float | None, now: float) -> bool:
    """Whether a refused sender last told so at `replied_at` (None: never) is told again."""
    return replied_at is None or now - replied_at >= REFUSAL_REPLY_INTERVAL_S


def _unaddressed(chat: InboundChat, sender: Trusted | Refused, facts: Facts) -> str | None:
    """Why a group or channel message is none of the bot's business, or None. A stranger
    there is refused only when they speak to the bot; an operator is heard as the admin's
    `respond_to` says (their commands, and their answers to a notification, always). DMs
    are always for the bot."""
    if chat.is_direct:
        return None
    in_agent_thread = facts.session_id is not None
    if isinstance(sender, Refused):
        if not stranger(sender) or names_the_bot(chat, in_agent_thread=in_agent_thread):
            return None
        return "a stranger's message, not addressed to the bot"
    if facts.notification is not None or facts.command is not None:
        return None
    wanted = respond_to(sender.workspace, chat.route)
    if addressed(chat, wanted, in_agent_thread=in_agent_thread):
        return None
    return f"not addressed to the bot (respond_to: {', '.join(wanted)})"


def _refusal(chat: InboundChat, sender: Refused, facts: Facts) -> Refuse:
    """A DM from someone who is not an operator, where the workspace pairs, gets a pairing
    step (a code, a reminder, or nothing past the cap) instead of the refusal: `facts.pairing`
    is read only then. Otherwise the refusal, said at most once an interval."""
    workspace = sender.workspace
    if workspace is None:  # no workspace of ours: told nothing
        return Refuse(Effects(refused(chat, sender.reason, replied=False)))
    if facts.pairing is not None:
        step = next_step(chat, workspace, facts.pairing)
        record = refused(chat, f"{sender.reason}; {step.outcome}", replied=step.answer is not None)
        return Refuse(Effects(record, pairing=step))
    if not refusal_due(facts.refusal_told_at, facts.now):
        return Refuse(Effects(refused(chat, sender.reason, replied=False)))
    answer = texts.NOT_ALLOWED_HERE if sender.operator_elsewhere else texts.NOT_AN_OPERATOR
    record = refused(chat, sender.reason, replied=True)
    return Refuse(Effects(record, (Answer(answer),), refusal_told=sender_key(chat)))


def _for_the_agent(chat: InboundChat, sender: Trusted, facts: Facts) -> Verdict:
    notification = facts.notification
    if notification is not None and not facts.notification_live:
        return _reject(chat, "notification_gone", texts.NOTIFICATION_GONE)
    correlation = notification.notification_id if notification else None
    about = notification.session_id if notification else None
    if facts.held_back:  # held for files, in order
        return Hold(_files(chat, sender, facts, about, correlation))
    if chat.button is not None and chat.text is None:  # a button whose command is unknown
        return _reject(chat, "button_gone", texts.BUTTON_GONE)
    if chat.text is None:
        kind = chat.attachment_kind or "attachment"
        return _reject(chat, "non_text", texts.NOT_TEXT.format(kind=kind))
    if not chat.text.strip() and not chat.context:  # a forward alone has no words
        return _reject(chat, "empty", texts.EMPTY)
    if facts.command is not None:
        return RunCommand(facts.command, sender, about, facts.decision)
    words, replies, cut_from = chat.text, list[Answer](), None
    if len(words) > MAX_PROMPT_CHARS:
        cut_from = len(words)
        replies.append(Answer(texts.TRUNCATED.format(length=cut_from, limit=MAX_PROMPT_CHARS)))
        words = words[:MAX_PROMPT_CHARS]
    if facts.held is not None:  # a budget holds the turn: said now, not when it ends
        replies.insert(0, facts.held)
    framing = facts.framing(sender.workspace)
    message = operator_prompt(
        framing.frame(words),
        chat.route,
        operator_id=sender.operator.id,
        message_ref=chat.message_ref,
        correlation_id=correlation or chat.dedupe_keys[0],
        private=chat.is_direct,
        passed_on=framing.passes_on(),
    )
    session_id = about or facts.session_id
    return Prompt(sender, session_id, message, Effects(replies=tuple(replies)), cut_from)


def _files(
    chat: InboundChat, sender: Trusted, facts: Facts, about: str | None, correlation: str | None
) -> FilesDecided:
    assert facts.attachments is not None  # read with every message held back
    addressee = Addressee(session_id=about, direct=chat.is_direct, correlation_id=correlation)
    return decide_files(
        chat,
        list(facts.keys),
        sender.operator.id,
        MAX_PROMPT_CHARS,
        frame=facts.framing(sender.workspace).frame,
        addressee=addressee,
        config=facts.attachments,
        download_limit=facts.download_limit,
    )


def _private(chat: InboundChat, sender: Trusted | Refused, facts: Facts) -> Verdict:
    """A slash command, answered to its sender alone: a stranger, or an operator in a
    conversation the admin did not allow, is told so (each time) and the refusal audited."""
    if isinstance(sender, Refused):
        answer = texts.NOT_ALLOWED_HERE if sender.operator_elsewhere else texts.NOT_AN_OPERATOR
        return Refuse(Effects(refused(chat, sender.reason, replied=True), (Answer(answer),)))
    command, invoked_as = facts.command, facts.private
    assert command is not None and invoked_as is not None  # read for every slash command
    if isinstance(command, Command) and command.name is CommandName.HELP:
        lines = "\n".join(
            f"{invoked_as} {name}{args} - {what}" for name, (args, what) in texts.COMMANDS.items()
        )
        return Tell(texts.SLASH_HELP.format(command=invoked_as, lines=lines))
    if isinstance(command, UnknownCommand):
        return Tell(
            texts.UNKNOWN_COMMAND.format(
                command=f"{invoked_as} {command.text.lstrip('/')}",
                help_hint=texts.SLASH_HINT.format(command=invoked_as),
            )
        )
    return RunCommand(command, sender, None)


def _reject(chat: InboundChat, reason: str, answer: str) -> Reject:
    return Reject(Effects(rejected(chat, reason), (Answer(answer),)))


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
