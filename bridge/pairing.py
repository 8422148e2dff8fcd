"""DM pairing (issue 17): from a bot token to a trusted operator without editing the file.

A direct message from someone who is not an operator of the workspace (with
`[workspaces.pairing] enabled`) gets a code instead of the "not an operator" reply: one per
sender while it is valid, at most `max_pending` at once per workspace, never for a group or
channel, nor for a press on one of the bot's buttons (wherever it is). The primary operator
is asked on their notify route, with Approve and Deny buttons; `switchboard pairing approve
CODE` and the admin console do the same store operation. An approved sender is an operator
of that workspace from their next message on. What a sender wrote while unpaired never
reaches the agent, and nothing is replayed after approval. A code is never written to a log
line.
"""

from __future__ import annotations

import asyncio
import logging
import re
import secrets
from dataclasses import dataclass

from bridge import texts
from bridge.events import PairingDecided
from bridge.platform import PlatformProfile
from bridge.routing import Router
from bridge.store.pairing import (
    PairedSender,
    PairingRequest,
    PairingStatus,
    PairingStore,
    announced,
    decide,
    give_code,
    reminded,
    revoke,
)
from bridge.store.store import BridgeStore
from bridge.store.transaction import BridgeTx
from bridge.types import DeliveryKind, InboundChat, Route
from config.schema import OperatorConfig, WorkspaceConfig
from runtime.clock import Clock
from runtime.ids import new_id
from runtime.tasks import cancel_and_wait

log = logging.getLogger(__name__)

ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I: read aloud, typed by hand
CODE_LENGTH = 8
CODE = re.compile(f"^[{ALPHABET}]{{{CODE_LENGTH}}}$")
REMIND_EVERY_S = 600.0  # a pending sender writing again hears at most this often
ANNOUNCE_EVERY_S = 2.0  # how often decisions made by another process are looked for


def new_code() -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))


def is_code(text: str) -> bool:
    return bool(CODE.match(text.strip().upper()))


def as_operator(paired: PairedSender, profile: PlatformProfile) -> OperatorConfig:
    """A paired sender, as the operators of the file are seen by trust."""
    user = paired.sender_id
    return profile.paired_operator(f"paired.{paired.platform}.{user}"[:64], user)


def who(request: PairingRequest | PairedSender) -> str:
    name = f"{request.sender_name} " if request.sender_name else ""
    return f"{name}(id {request.sender_id} on {request.platform})"


def decision_fields(request: PairingRequest, decision: str, by: str | None) -> dict[str, str]:
    """For the log: which sender, what was decided, by whom (never the code: a credential)."""
    return {
        "workspace": request.workspace_id,
        "platform": request.platform,
        "sender_id": request.sender_id,
        "decision": decision,
        **({"by": by} if by else {}),
    }


@dataclass(frozen=True, slots=True)
class PairingLook:
    """What a stranger's DM where their workspace pairs needs read before it is decided."""

    open_request: PairingRequest | None  # their code, pending or answered, still valid
    pending: int  # codes pending in the workspace now
    code: str  # the code they get if they get a new one
    ask: Route | None  # where the primary operator is asked about a new code
    now: float


@dataclass(frozen=True, slots=True)
class PairingStep:
    """What a stranger's DM does to pairing (`next_step`), written by `record_step` in the
    message's own transaction."""

    outcome: str  # for the message's refusal record and the log
    answer: str | None  # what the sender is told
    request: PairingRequest | None = None  # a new code
    ask: Route | None = None  # where the primary operator is asked about the new code
    remind: PairingRequest | None = None  # their open request, of which they are reminded


def next_step(chat: InboundChat, workspace: WorkspaceConfig, look: PairingLook) -> PairingStep:
    """What a DM from a non-operator where pairing is on does: a code (once), a reminder
    (rarely), or nothing past the cap; with a new code, the primary operator is asked."""
    held, now = look.open_request, look.now
    if held is not None:
        remind = held.status is PairingStatus.PENDING and (
            held.reminded_at is None or now - held.reminded_at >= REMIND_EVERY_S
        )
        answer = texts.PAIRING_REMINDER if remind else None
        return PairingStep("pairing pending", answer, remind=held if remind else None)
    if look.pending >= workspace.pairing.max_pending:
        return PairingStep("pairing: too many codes pending", None)
    request = PairingRequest(
        code=look.code,
        workspace_id=workspace.id,
        platform=chat.route.platform,
        sender_id=chat.sender_id,
        sender_name=chat.sender_name,
        route=chat.route.home,
        status=PairingStatus.PENDING,
        created_at=now,
        expires_at=now + workspace.pairing.code_ttl_s,
    )
    answer = texts.PAIRING_CODE.format(code=request.code, workspace=workspace.id)
    return PairingStep("pairing code given", answer, request=request, ask=look.ask)


def record_step(tx: BridgeTx, chat: InboundChat, step: PairingStep) -> None:
    """Write `step` in the transaction that records the message."""
    request = step.request
    if request is not None:
        give_code(tx, request)
        if step.ask is not None:
            intent = new_id("dlv")
            text = texts.PAIRING_ASK.format(
                who=who(request), workspace=request.workspace_id, code=request.code
            )
            tx.enqueue(intent, step.ask, DeliveryKind.APPROVAL, text)
            tx.asks(intent, "pairing", request.code)
    elif step.remind is not None:
        reminded(tx, step.remind.code)
    if step.answer is not None:
        tx.enqueue(new_id("dlv"), chat.route.home, DeliveryKind.COMMAND_REPLY, step.answer)


class Pairing:
    def __init__(self, store: BridgeStore, router: Router, clock: Clock) -> None:
        self._store = store
        self.records = PairingStore(store.runtime_store)
        self._router = router
        self._clock = clock
        self._task: asyncio.Task[None] | None = None
        self._announcing = asyncio.Lock()

    async def operator(
        self, chat: InboundChat, workspace: WorkspaceConfig, profile: PlatformProfile
    ) -> OperatorConfig | None:
        """The sender as an operator of `workspace`, if they were paired with it (on the
        platform of `profile`, the message's)."""
        route = chat.route
        paired = await self.records.paired(workspace.id, route.platform, chat.sender_id)
        return as_operator(paired, profile) if paired is not None else None

    async def look(self, chat: InboundChat, workspace: WorkspaceConfig) -> PairingLook:
        """What `next_step` needs to decide a stranger's DM to `workspace`."""
        route, now = chat.route, self._clock.wall()
        return PairingLook(
            open_request=await self.records.open_request(
                workspace.id, route.platform, chat.sender_id, now
            ),
            pending=await self.records.pending_count(workspace.id, now),
            code=new_code(),
            ask=self._router.primary_route(workspace),
            now=now,
        )

    async def answer(self, code: str, approve: bool, workspace: WorkspaceConfig, by: str) -> str:
        """An operator's /approve or /deny of a code (typed, or its buttons)."""
        request = await self.records.request(code.strip().upper())
        if request is None or request.workspace_id != workspace.id:
            return texts.PAIRING_UNKNOWN.format(code=code)
        problem = self.problem(request)
        if problem is not None:
            if request.status is PairingStatus.PENDING:  # its time ran out unanswered
                log.info("pairing decided", extra=decision_fields(request, "expired", by))
            return problem
        status = PairingStatus.APPROVED if approve else PairingStatus.DENIED
        async with self._store.write() as tx:
            decide(tx, request, status, by)
        await self.announce()
        # Another answer may have committed between the read above and this write: say
        # whose answer stands, not ours.
        after = await self.records.request(request.code)
        if after is None or after.status is not status or after.decided_by != by:
            return self.problem(after or request) or texts.PAIRING_UNKNOWN.format(code=code)
        said = texts.PAIRING_APPROVED if approve else texts.PAIRING_DENIED
        return said.format(who=who(request), workspace=workspace.id)

    def problem(self, request: PairingRequest) -> str | None:
        """Why this code cannot be answered now, or None."""
        if request.status is not PairingStatus.PENDING:
            return texts.PAIRING_ANSWERED.format(status=request.status, by=request.decided_by)
        if request.expires_at < self._clock.wall():
            return texts.PAIRING_EXPIRED.format(code=request.code)
        return None

    # -- the console's view --------------------------------------------------------------

    async def pending_in(self, workspace_id: str) -> list[PairingRequest]:
        return [
            r
            for r in await self.records.pending(self._clock.wall())
            if r.workspace_id == workspace_id
        ]

    async def paired_in(self, workspace_id: str) -> list[PairedSender]:
        return [p for p in await self.records.all_paired() if p.workspace_id == workspace_id]

    async def revoke(self, workspace_id: str, platform: str, user: str, by: str) -> str:
        paired = await revoke_sender(self._store, self.records, workspace_id, platform, user, by)
        if paired is None:
            return texts.PAIRING_NOT_PAIRED.format(user=user, platform=platform)
        await self.announce()
        return texts.PAIRING_REVOKED_BY.format(who=who(paired), workspace=workspace_id)

    # -- telling the sender ------------------------------------------------------------

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._follow(), name="pairing")

    async def stop(self) -> None:
        await cancel_and_wait(self._task)

    async def _follow(self) -> None:
        while True:
            try:
                await self.announce()
            except Exception:
                log.exception("pairing announcements failed")
            await self._clock.sleep(ANNOUNCE_EVERY_S)

    async def announce(self) -> None:
        """Tell each sender their answer, and write it to the ledger, once (a decision by the
        CLI comes from another process: this one finds it here). One announcement at a time:
        the periodic one and an operator's answer would otherwise read the same unannounced
        request and tell the sender twice."""
        async with self._announcing:
            for request in await self.records.unannounced():
                async with self._store.write() as tx:
                    self._tell(tx, request)
                    announced(tx, request.code)
                # Here once, whoever decided (a button, the console, the CLI in another
                # process).
                status, by = request.status.value, request.decided_by
                log.info("pairing decided", extra=decision_fields(request, status, by))

    def _tell(self, tx: BridgeTx, request: PairingRequest) -> None:
        said = {
            PairingStatus.APPROVED: texts.PAIRING_WELCOME,
            PairingStatus.DENIED: texts.PAIRING_DECLINED,
            PairingStatus.REVOKED: texts.PAIRING_REVOKED,
        }.get(request.status)
        if said is not None:
            text = said.format(workspace=request.workspace_id)
            tx.enqueue(new_id("dlv"), request.route, DeliveryKind.COMMAND_REPLY, text)
        tx.emit(
            PairingDecided(
                workspace_id=request.workspace_id,
                platform=request.platform,
                sender_id=request.sender_id,
                status=request.status,
                decided_by=request.decided_by or "",
            )
        )


async def revoke_sender(
    store: BridgeStore, records: PairingStore, workspace_id: str, platform: str, user: str, by: str
) -> PairedSender | None:
    """Take a paired sender's operator rights back at once; None if they were not paired."""
    paired = await records.paired(workspace_id, platform, user)
    if paired is None:
        return None
    async with store.write() as tx:
        revoke(tx, paired, by)
    return paired
