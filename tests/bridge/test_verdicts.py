"""What becomes of a chat message, decided without I/O (`bridge.verdicts.decide`): one row
per situation an operator or a stranger can be in, and what its verdict holds (the record,
what the sender is told, the pairing step, the prompt for the agent) for the bridge to write."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bridge import texts
from bridge.commands import Command, CommandName
from bridge.facts import Facts, command_of
from bridge.replies import compose
from bridge.trust import Refused, Trusted
from bridge.types import Answer, FileKind, InboundChat, InboundFile, Route
from bridge.verdicts import (
    MAX_PROMPT_CHARS,
    REFUSAL_REPLY_INTERVAL_S,
    Refuse,
    decide,
    refusal_due,
)
from tests.bridge.verdict_world import (
    ACME,
    ANSWERS,
    ELSEWHERE,
    FILES,
    FORWARD,
    FRESH,
    LONG,
    MENTIONS_ONLY,
    NO_CODES_YET,
    NOTIFICATION,
    NOWHERE,
    OPERATOR,
    OPERATOR_MENTIONS_ONLY,
    PENDING,
    PHOTO,
    SLASH_HELP,
    STRANGER,
    STRANGER_PAIRS,
    TOLD_A_MINUTE_AGO,
    TOO_LARGE,
    VOICE_SKIPPED,
    Summary,
    dm,
    group,
    prompt,
    refusal,
    summary,
)

ANSWER_TO_NOTIFICATION = '[Replying to notification ntf_1: "disk full"]'
CASES: list[tuple[str, InboundChat, Trusted | Refused, Facts, Summary]] = [
    ("a copy handled before", dm(), OPERATOR, Facts(duplicate=True), ("duplicate",)),
    ("an operator's DM", dm(), OPERATOR, FRESH, prompt("hello")),
    (
        "an operator's DM in a conversation with a session",
        dm(),
        OPERATOR,
        replace(FRESH, session_id="ses_9"),
        prompt("hello", "ses_9"),
    ),
    (
        "an operator's words past the limit are cut, and they are told",
        dm(LONG),
        OPERATOR,
        FRESH,
        prompt(
            LONG[:MAX_PROMPT_CHARS],
            told=(texts.TRUNCATED.format(length=len(LONG), limit=MAX_PROMPT_CHARS),),
            cut=len(LONG),
        ),
    ),
    (
        "an operator's words while a budget holds the turn: told at once",
        dm(),
        OPERATOR,
        replace(FRESH, session_id="ses_9", held=Answer("held by budget daily")),
        prompt("hello", "ses_9", told=("held by budget daily",)),
    ),
    (
        "a forward with no words of the operator's own",
        dm("", context=FORWARD),
        OPERATOR,
        replace(FRESH, context=FORWARD),
        ("prompt", compose("", None, FORWARD, ACME, None), None, [], None),
    ),
    (
        "a command",
        dm("/status"),
        OPERATOR,
        FRESH,
        ("command", Command(CommandName.STATUS), None),
    ),
    (
        "a command answering a notification is about its session",
        dm("/stop"),
        OPERATOR,
        ANSWERS,
        ("command", Command(CommandName.STOP), "ses_1"),
    ),
    (
        "a sticker",
        dm(None, attachment_kind="sticker"),
        OPERATOR,
        FRESH,
        ("reject", "non_text", [texts.NOT_TEXT.format(kind="sticker")]),
    ),
    ("an empty message", dm(" \n "), OPERATOR, FRESH, ("reject", "empty", [texts.EMPTY])),
    (
        "a press of a button that no longer works",
        dm(None, button="b1"),
        OPERATOR,
        FRESH,
        ("reject", "button_gone", [texts.BUTTON_GONE]),
    ),
    (
        "an answer to a notification whose session is gone",
        dm("go on"),
        OPERATOR,
        replace(ANSWERS, notification_live=False),
        ("reject", "notification_gone", [texts.NOTIFICATION_GONE]),
    ),
    (
        "words behind a message waiting for its files wait too, framed as they will be sent",
        dm("see this"),
        OPERATOR,
        replace(ANSWERS, held_back=True, attachments=FILES),
        ("hold", "ses_1", compose("see this", NOTIFICATION, (), ACME, None), 0, ()),
    ),
    (
        "a photo with words: held for the photo",
        dm("look", files=(PHOTO,)),
        OPERATOR,
        replace(FRESH, held_back=True, attachments=FILES),
        ("hold", None, "look", 1, ()),
    ),
    (
        "a photo past the platform's download limit, with words: the words go on, told why",
        dm("look", files=(replace(PHOTO, size=30_000_000),)),
        OPERATOR,
        replace(FRESH, held_back=True, attachments=FILES, download_limit=20_000_000),
        ("hold", None, "look", 0, (TOO_LARGE,)),
    ),
    (
        "a voice message alone: nothing of it is passed on, and the operator told why",
        dm(None, files=(InboundFile("v1", FileKind.VOICE),)),
        OPERATOR,
        replace(FRESH, held_back=True, attachments=FILES),
        ("hold nothing", [VOICE_SKIPPED]),
    ),
    (
        "an answer to a notification goes to its session, naming it",
        dm("yes"),
        OPERATOR,
        replace(ANSWERS, session_id="ses_9"),
        prompt(compose("yes", NOTIFICATION, (), ACME, None), "ses_1"),
    ),
    (
        "an operator's group chatter where the bot answers mentions only",
        group(),
        OPERATOR_MENTIONS_ONLY,
        FRESH,
        ("ignore", "not addressed to the bot (respond_to: mention)", True),
    ),
    (
        "an operator's mention of the bot there",
        group(mentions_bot=True),
        OPERATOR_MENTIONS_ONLY,
        FRESH,
        prompt("hello"),
    ),
    (
        "an operator's command there, unaddressed",
        group("/status"),
        OPERATOR_MENTIONS_ONLY,
        FRESH,
        ("command", Command(CommandName.STATUS), None),
    ),
    (
        "an operator's answer to a notification there, unaddressed",
        group("yes"),
        OPERATOR_MENTIONS_ONLY,
        ANSWERS,
        prompt(compose("yes", NOTIFICATION, (), MENTIONS_ONLY, None), "ses_1"),
    ),
    (
        "a stranger's group chatter",
        group(),
        STRANGER,
        FRESH,
        ("ignore", "a stranger's message, not addressed to the bot", False),
    ),
    (
        "a stranger's reply in the agent's thread",
        group(thread_reply=True),
        STRANGER,
        replace(FRESH, session_id="ses_9"),
        refusal(STRANGER, texts.NOT_AN_OPERATOR),
    ),
    ("a stranger's DM", dm(), STRANGER, FRESH, refusal(STRANGER, texts.NOT_AN_OPERATOR)),
    (
        "a stranger's DM a minute after they were told: recorded, not told again",
        dm(),
        STRANGER,
        TOLD_A_MINUTE_AGO,
        refusal(STRANGER),
    ),
    (
        "an operator in a group not allowed, unaddressed",
        group(),
        ELSEWHERE,
        FRESH,
        refusal(ELSEWHERE, texts.NOT_ALLOWED_HERE),
    ),
    ("a workspace that is not ours", dm(), NOWHERE, FRESH, refusal(NOWHERE)),
    (
        "a stranger's DM where the workspace pairs: a code instead of the refusal",
        dm(),
        STRANGER_PAIRS,
        replace(FRESH, pairing=NO_CODES_YET),
        (
            "refuse",
            f"{STRANGER_PAIRS.reason}; pairing code given",
            [texts.PAIRING_CODE.format(code="ABCD2345", workspace="acme")],
            "pairing code given",
            False,
        ),
    ),
    (
        "a stranger's DM past the cap of pending codes: nothing said",
        dm(),
        STRANGER_PAIRS,
        replace(FRESH, pairing=replace(NO_CODES_YET, pending=3)),
        (
            "refuse",
            f"{STRANGER_PAIRS.reason}; pairing: too many codes pending",
            [],
            "pairing: too many codes pending",
            False,
        ),
    ),
    (
        "a stranger's DM with a code pending, written again: reminded",
        dm(),
        STRANGER_PAIRS,
        replace(FRESH, pairing=replace(NO_CODES_YET, open_request=PENDING)),
        (
            "refuse",
            f"{STRANGER_PAIRS.reason}; pairing pending",
            [texts.PAIRING_REMINDER],
            "pairing pending",
            False,
        ),
    ),
    (
        "a slash command from a stranger: told each time, to them alone",
        dm("/status"),
        STRANGER,
        replace(TOLD_A_MINUTE_AGO, private="/switchboard"),
        ("refuse", STRANGER.reason, [texts.NOT_AN_OPERATOR], None, False),
    ),
    (
        "a slash command's help names it as it was invoked",
        dm("/help"),
        OPERATOR,
        replace(FRESH, private="/sb"),
        ("tell", SLASH_HELP),
    ),
    (
        "an unknown slash command",
        dm("/frobnicate"),
        OPERATOR,
        replace(FRESH, private="/sb"),
        (
            "tell",
            texts.UNKNOWN_COMMAND.format(
                command="/sb frobnicate", help_hint=texts.SLASH_HINT.format(command="/sb")
            ),
        ),
    ),
    (
        "a slash command",
        dm("/status"),
        OPERATOR,
        replace(FRESH, private="/sb"),
        ("command", Command(CommandName.STATUS), None),
    ),
]


@pytest.mark.parametrize(
    ("chat", "sender", "facts", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_each_situation_has_its_verdict(
    chat: InboundChat, sender: Trusted | Refused, facts: Facts, expected: Summary
) -> None:
    read = replace(facts, command=None if facts.duplicate else command_of(chat, facts.private))
    assert summary(decide(chat, sender, read)) == expected


def test_every_verdict_is_reached() -> None:
    reached = {c[-1][0] for c in CASES}
    kinds = {"duplicate", "ignore", "refuse", "reject", "tell", "command", "hold", "prompt"}
    assert reached == kinds | {"hold nothing"}


def test_a_pairing_code_is_the_one_read_and_the_primary_operator_is_asked() -> None:
    ask = Route(platform="telegram", workspace_id="acme", conversation_id="1001")
    facts = replace(FRESH, pairing=replace(NO_CODES_YET, ask=ask))
    verdict = decide(dm(), STRANGER_PAIRS, facts)
    assert isinstance(verdict, Refuse) and verdict.effects.pairing is not None
    step = verdict.effects.pairing
    assert step.request is not None and step.request.code == "ABCD2345" and step.ask == ask
    assert step.answer == texts.PAIRING_CODE.format(code="ABCD2345", workspace="acme")


@pytest.mark.parametrize(
    ("replied_ago", "due"),
    [(None, True), (REFUSAL_REPLY_INTERVAL_S - 1, False), (REFUSAL_REPLY_INTERVAL_S, True)],
)
def test_a_stranger_is_told_at_most_once_an_interval(replied_ago: float | None, due: bool) -> None:
    now = 1_000_000.0
    assert refusal_due(None if replied_ago is None else now - replied_ago, now) is due
