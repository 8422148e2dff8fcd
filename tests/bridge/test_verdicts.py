"""What becomes of a chat message, decided without I/O (`bridge.verdicts.decide`): one row
per situation an operator or a stranger can be in, and the verdict the bridge then applies."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bridge import InboundChat, Quoted, Route, Via, texts
from bridge.commands import Command, CommandName
from bridge.store import NotificationPost
from bridge.trust import Refused, Trusted
from bridge.verdicts import (
    MAX_PROMPT_CHARS,
    REFUSAL_REPLY_INTERVAL_S,
    Duplicate,
    Hold,
    Ignore,
    Pair,
    Prompt,
    Refuse,
    Reject,
    RunCommand,
    Seen,
    Verdict,
    decide,
    refusal_due,
)
from config.schema import OperatorConfig, WorkspaceConfig

ALICE = OperatorConfig(id="alice", primary=True, telegram_user_id=1001)


def workspace(**settings: object) -> WorkspaceConfig:
    return WorkspaceConfig.model_validate(
        {
            "id": "acme",
            "default_agent": "assistant",
            "operators": [ALICE.model_dump()],
            "agents": [{"id": "assistant"}],
            "telegram": {"bot_token": "123:test", "chats": [-100]},
            **settings,
        }
    )


ACME = workspace()
PAIRS = workspace(pairing={"enabled": True})
MENTIONS_ONLY = workspace(respond_to="mention")
OPERATOR = Trusted(ACME, ALICE)
OPERATOR_MENTIONS_ONLY = Trusted(MENTIONS_ONLY, ALICE)
STRANGER = Refused("sender '666' is not an operator", ACME)
STRANGER_PAIRS = Refused("sender '666' is not an operator", PAIRS)
NOWHERE = Refused("unknown workspace 'zeta'")
ELSEWHERE = Refused("conversation '-999' is not allowed", ACME, operator_elsewhere=True)
NOTIFICATION = NotificationPost("ntf_1", "ses_1", "acme/assistant", "acme/assistant", "disk full")

FRESH = Seen(duplicate=False, pairing=True)
ANSWERS = replace(FRESH, notification=NOTIFICATION, notification_live=True)


def dm(text: str | None = "hello", **fields: object) -> InboundChat:
    route = Route(platform="telegram", workspace_id="acme", conversation_id="1001")
    chat = InboundChat(route=route, sender_id="1001", dedupe_keys=("update:1",), text=text)
    return replace(chat, is_direct=True, **fields)  # type: ignore[arg-type]


def group(text: str | None = "hello", **fields: object) -> InboundChat:
    route = Route(platform="telegram", workspace_id="acme", conversation_id="-100")
    chat = InboundChat(route=route, sender_id="1001", dedupe_keys=("update:1",), text=text)
    return replace(chat, **fields)  # type: ignore[arg-type]


LONG = "x" * (MAX_PROMPT_CHARS + 5)
FORWARD = (Quoted(text="the report", author_id="2002", via=Via.FORWARD),)

CASES: list[tuple[str, InboundChat, Trusted | Refused, Seen, Verdict]] = [
    ("a copy handled before", dm(), OPERATOR, Seen(duplicate=True), Duplicate()),
    ("an operator's DM", dm(), OPERATOR, FRESH, Prompt(OPERATOR, None, "hello", None)),
    (
        "an operator's words past the limit are cut, and they are told",
        dm(LONG),
        OPERATOR,
        FRESH,
        Prompt(
            OPERATOR,
            None,
            LONG[:MAX_PROMPT_CHARS],
            texts.TRUNCATED.format(length=len(LONG), limit=MAX_PROMPT_CHARS),
        ),
    ),
    (
        "a forward with no words of the operator's own",
        dm("", context=FORWARD),
        OPERATOR,
        FRESH,
        Prompt(OPERATOR, None, "", None),
    ),
    (
        "a command",
        dm("/status"),
        OPERATOR,
        FRESH,
        RunCommand(Command(CommandName.STATUS), OPERATOR, None),
    ),
    (
        "a command answering a notification is about its session",
        dm("/stop"),
        OPERATOR,
        ANSWERS,
        RunCommand(Command(CommandName.STOP), OPERATOR, NOTIFICATION),
    ),
    (
        "a sticker",
        dm(None, attachment_kind="sticker"),
        OPERATOR,
        FRESH,
        Reject("non_text", texts.NOT_TEXT.format(kind="sticker")),
    ),
    ("an empty message", dm(" \n "), OPERATOR, FRESH, Reject("empty", texts.EMPTY)),
    (
        "an answer to a notification whose session is gone",
        dm("go on"),
        OPERATOR,
        replace(ANSWERS, notification_live=False),
        Reject("notification_gone", texts.NOTIFICATION_GONE),
    ),
    (
        "files, or words behind a message waiting for its files",
        dm("see this"),
        OPERATOR,
        replace(ANSWERS, held_back=True),
        Hold(OPERATOR, NOTIFICATION),
    ),
    (
        "an operator's group chatter where the bot answers mentions only",
        group(),
        OPERATOR_MENTIONS_ONLY,
        FRESH,
        Ignore("not addressed to the bot (respond_to: mention)", operator=True),
    ),
    (
        "an operator's mention of the bot there",
        group(mentions_bot=True),
        OPERATOR_MENTIONS_ONLY,
        FRESH,
        Prompt(OPERATOR_MENTIONS_ONLY, None, "hello", None),
    ),
    (
        "an operator's command there, unaddressed",
        group("/status"),
        OPERATOR_MENTIONS_ONLY,
        FRESH,
        RunCommand(Command(CommandName.STATUS), OPERATOR_MENTIONS_ONLY, None),
    ),
    (
        "an operator's answer to a notification there, unaddressed",
        group("yes"),
        OPERATOR_MENTIONS_ONLY,
        ANSWERS,
        Prompt(OPERATOR_MENTIONS_ONLY, NOTIFICATION, "yes", None),
    ),
    (
        "a stranger's group chatter",
        group(),
        STRANGER,
        FRESH,
        Ignore("a stranger's message, not addressed to the bot", operator=False),
    ),
    (
        "a stranger's reply in the agent's thread",
        group(thread_reply=True),
        STRANGER,
        replace(FRESH, in_agent_thread=True),
        Refuse(STRANGER.reason, texts.NOT_AN_OPERATOR),
    ),
    ("a stranger's DM", dm(), STRANGER, FRESH, Refuse(STRANGER.reason, texts.NOT_AN_OPERATOR)),
    (
        "an operator in a group not allowed, unaddressed",
        group(),
        ELSEWHERE,
        FRESH,
        Refuse(ELSEWHERE.reason, texts.NOT_ALLOWED_HERE),
    ),
    ("a workspace that is not ours", dm(), NOWHERE, FRESH, Refuse(NOWHERE.reason, None)),
    (
        "a stranger's DM where the workspace pairs",
        dm(),
        STRANGER_PAIRS,
        FRESH,
        Pair(STRANGER_PAIRS.reason, PAIRS),
    ),
    (
        "a stranger's press of a button there: no request to pair",
        dm("/approve ABCD2345", pressed=True),
        STRANGER_PAIRS,
        FRESH,
        Refuse(STRANGER_PAIRS.reason, texts.NOT_AN_OPERATOR),
    ),
    (
        "a stranger's mention in a group there: groups never pair",
        group(mentions_bot=True),
        STRANGER_PAIRS,
        FRESH,
        Refuse(STRANGER_PAIRS.reason, texts.NOT_AN_OPERATOR),
    ),
    (
        "a stranger's DM to a bridge that pairs no one",
        dm(),
        STRANGER_PAIRS,
        replace(FRESH, pairing=False),
        Refuse(STRANGER_PAIRS.reason, texts.NOT_AN_OPERATOR),
    ),
]


@pytest.mark.parametrize(
    ("chat", "sender", "seen", "verdict"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_each_situation_has_its_verdict(
    chat: InboundChat, sender: Trusted | Refused, seen: Seen, verdict: Verdict
) -> None:
    assert decide(chat, sender, seen) == verdict


def test_every_verdict_is_reached() -> None:
    reached = {type(c[-1]) for c in CASES}
    assert reached == {Duplicate, Ignore, Refuse, Pair, Reject, RunCommand, Hold, Prompt}


@pytest.mark.parametrize(
    ("replied_ago", "due"),
    [(None, True), (REFUSAL_REPLY_INTERVAL_S - 1, False), (REFUSAL_REPLY_INTERVAL_S, True)],
)
def test_a_stranger_is_told_at_most_once_an_interval(replied_ago: float | None, due: bool) -> None:
    now = 1_000_000.0
    assert refusal_due(None if replied_ago is None else now - replied_ago, now) is due
