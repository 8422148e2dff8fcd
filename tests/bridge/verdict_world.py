"""The people, chats and surroundings the verdict table of `test_verdicts.py` is written in,
and what of a verdict a person would notice (`summary`)."""

from __future__ import annotations

from dataclasses import replace

from bridge import texts
from bridge.attachments.downloads import skipped_notice
from bridge.attachments.policy import Skipped, name_of, too_large
from bridge.events import InboundRefused
from bridge.facts import Facts
from bridge.pairing import PairingLook
from bridge.store.pairing import PairingRequest, PairingStatus
from bridge.store.records import NotificationPost
from bridge.trust import Refused, Trusted
from bridge.types import FileKind, InboundChat, InboundFile, Quoted, Route, Via
from bridge.verdicts import (
    MAX_PROMPT_CHARS,
    Duplicate,
    Hold,
    Ignore,
    Prompt,
    Refuse,
    Reject,
    RunCommand,
    Tell,
    Verdict,
)
from config.schema import AttachmentsConfig, OperatorConfig, WorkspaceConfig
from runtime.transcript import AttachmentForm

ALICE = OperatorConfig.model_validate({"id": "alice", "primary": True, "telegram_user_id": 1001})


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

NOW = 1_000_000.0
FRESH = Facts(duplicate=False, now=NOW)
ANSWERS = replace(FRESH, notification=NOTIFICATION, notification_live=True)
NO_CODES_YET = PairingLook(None, pending=0, code="ABCD2345", ask=None, now=NOW)
TOLD_A_MINUTE_AGO = replace(FRESH, refusal_told_at=NOW - 60)


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

PENDING = PairingRequest(
    code="ABCD2345",
    workspace_id="acme",
    platform="telegram",
    sender_id="666",
    sender_name=None,
    route=Route(platform="telegram", workspace_id="acme", conversation_id="666"),
    status=PairingStatus.PENDING,
    created_at=NOW - 3600,
    expires_at=NOW + 3600,
)
FILES = AttachmentsConfig()
PHOTO = InboundFile("p1", FileKind.PHOTO, size=1000)
VOICE_SKIPPED = skipped_notice(
    [Skipped("a voice message", texts.FILE_KIND_NOT_READ.format(kind="voice message"))],
    nothing_left=True,
)
TOO_LARGE = skipped_notice(
    [Skipped(name_of(PHOTO), too_large(30_000_000, 5_242_880, AttachmentForm.IMAGE))],
    nothing_left=False,
)
SLASH_HELP = texts.SLASH_HELP.format(
    command="/sb",
    lines="\n".join(f"/sb {name}{args} - {what}" for name, (args, what) in texts.COMMANDS.items()),
)


Summary = tuple[object, ...]


def summary(verdict: Verdict) -> Summary:
    """What of a verdict a person would notice: its kind, what is recorded, who is told what,
    what the agent is given."""
    match verdict:
        case Duplicate():
            return ("duplicate",)
        case Ignore(effects=e, operator=operator):
            assert e.record is not None and not e.replies
            return ("ignore", e.record.reason, operator)
        case Refuse(effects=e):
            told = [a.text for a in e.replies]
            if e.pairing is not None and e.pairing.answer is not None:
                told.append(e.pairing.answer)
            assert isinstance(e.record, InboundRefused) and e.record.replied == bool(told)
            pairing = e.pairing.outcome if e.pairing else None
            return ("refuse", e.record.reason, told, pairing, e.refusal_told is not None)
        case Reject(effects=e):
            assert e.record is not None
            return ("reject", e.record.reason, [a.text for a in e.replies])
        case Tell(answer=answer):
            return ("tell", answer)
        case RunCommand():
            return ("command", verdict.command, verdict.notification_session)
        case Hold(decided=decided):
            held = decided.held
            if held is None:
                return ("hold nothing", list(decided.notices))
            return ("hold", held.addressee.session_id, held.text, len(held.files), decided.notices)
        case Prompt(effects=e):
            told = [a.text for a in e.replies]
            return ("prompt", verdict.message.text, verdict.session_id, told, verdict.cut_from)


def prompt(
    text: str, session: str | None = None, told: tuple[str, ...] = (), cut: int | None = None
) -> Summary:
    return ("prompt", text, session, list(told), cut)


def refusal(sender: Refused, *told: str, told_now: bool | None = None) -> Summary:
    return ("refuse", sender.reason, list(told), None, bool(told) if told_now is None else told_now)
