"""Chat message in (DESIGN §3, Ingress): read what the decision needs, decide without I/O
(`bridge/verdicts.py`), apply the verdict. When `receive` returns the message is durably
handled: an operator's prompt is stored (before the adapter acknowledges the platform), or
the message is recorded as handled, with its audit record and its reply, in one transaction
(`_settle`). Commands run in `commands.py`."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import replace
from typing import assert_never

from bridge.attachments.held import Addressee
from bridge.attachments.intake import FileIntake
from bridge.commands import Command, Commands, answers_approval
from bridge.events import InboundIgnored, InboundRefused, InboundRejected, InboundTruncated
from bridge.metrics import Metrics
from bridge.outbox import Outbox
from bridge.pairing import Pairing
from bridge.places import named
from bridge.platform import PlatformProfile
from bridge.platforms import Platforms
from bridge.prompt import operator_prompt
from bridge.replies import Pointing, compose
from bridge.sessions import Sessions
from bridge.spend.notices import held_now
from bridge.store import BridgeStore, BridgeTx, NotificationPost
from bridge.store.buttons import ButtonStore
from bridge.trust import Refused, Trusted, classify
from bridge.types import Answer, DeliveryKind, InboundChat
from bridge.verdicts import (
    MAX_PROMPT_CHARS,
    Duplicate,
    Hold,
    Ignore,
    Outcome,
    Pair,
    Prompt,
    Refuse,
    Reject,
    RunCommand,
    Seen,
    Verdict,
    decide,
    ignored,
    refusal_due,
    refused,
    rejected,
    stranger,
)
from config.current import CurrentConfig
from config.timing import zone
from runtime import Runtime, Trust
from runtime.errors import StoreConflictError, UnknownSessionError
from runtime.ids import new_id
from runtime.store import Writer

log = logging.getLogger(__name__)

Record = InboundIgnored | InboundRefused | InboundRejected


class Ingress:
    def __init__(
        self,
        config: CurrentConfig,
        runtime: Runtime,
        store: BridgeStore,
        sessions: Sessions,
        platforms: Platforms,
        outbox: Outbox,
        commands: Commands,
        metrics: Metrics,
        files: FileIntake | None = None,
        pairing: Pairing | None = None,
    ) -> None:
        self._config = config
        self._runtime = runtime
        self._store = store
        self._sessions = sessions
        self._platforms = platforms
        self._outbox = outbox
        self._commands = commands
        self._metrics = metrics
        self._pointing = Pointing(store, sessions, platforms)
        self._buttons = ButtonStore(store.runtime_store)
        self._files = files
        self._pairing = pairing
        # One refusal decided at a time: conversations are handed on side by side, and two
        # messages of one stranger must not both find that no refusal was sent yet.
        self._refusing = asyncio.Lock()

    async def receive(self, chat: InboundChat) -> Outcome:
        """Handle one platform message. When this returns, it is durably handled.

        The platform ids are marked seen in the same transaction that stores the outcome,
        so of two copies arriving at once (a retry racing the original), one loses there.
        """
        keys = [f"{chat.route.platform}:{chat.route.workspace_id}:{k}" for k in chat.dedupe_keys]
        profile = self._platforms.profile(chat.route.platform)  # None: no adapter for it runs
        try:
            chat = await self._pressed(chat)
            sender, seen = await self._read(chat, keys, profile)
            return await self._apply(chat, keys, profile, decide(chat, sender, seen))
        except StoreConflictError:
            return Outcome.DUPLICATE

    # -- read --------------------------------------------------------------------------

    async def _pressed(self, chat: InboundChat) -> InboundChat:
        """A press of a button under a command's answer, as the command that button stands
        for (read from the message's delivery, in this workspace only); unknown here, its
        text stays None and `decide` says the button no longer works."""
        if chat.button is None or chat.replied_to is None:
            return chat
        command = await self._buttons.command_at(chat.route, chat.replied_to, chat.button)
        return replace(chat, text=command)

    async def _read(
        self, chat: InboundChat, keys: list[str], profile: PlatformProfile | None
    ) -> tuple[Trusted | Refused, Seen]:
        """The sender's trust (an operator by the file, or by pairing) and what `decide`
        needs of the conversation; of a copy handled before, nothing more is read."""
        sender = classify(self._config(), chat, profile)
        if await self._store.seen(keys):
            return sender, Seen(duplicate=True)
        workspace = sender.workspace if stranger(sender) else None  # an operator by pairing?
        if self._pairing is not None and profile is not None and workspace is not None:
            paired = await self._pairing.operator(chat, workspace, profile)
            if paired is not None:  # an operator by pairing, not by the file
                sender = classify(self._config(), chat, profile, also=(paired,))
        # An operator's answer to a notification is for the bot wherever it is written.
        trusted = isinstance(sender, Trusted)
        notification = await self._pointing.notification(chat) if trusted else None
        return sender, Seen(
            duplicate=False,
            in_agent_thread=self._sessions.session_of(chat.route) is not None,
            notification=notification,
            notification_live=notification is not None and self._knows(notification),
            held_back=self._files is not None and self._files.wants(chat),
            pairing=self._pairing is not None,
        )

    def _knows(self, notification: NotificationPost) -> bool:
        try:
            self._runtime.session(notification.session_id)
        except UnknownSessionError:
            return False
        return True

    # -- apply -------------------------------------------------------------------------

    async def _apply(
        self,
        chat: InboundChat,
        keys: list[str],
        profile: PlatformProfile | None,
        verdict: Verdict,
    ) -> Outcome:
        match verdict:
            case Duplicate():
                return Outcome.DUPLICATE
            case Ignore():
                await self._ignore(chat, keys, verdict)
                return Outcome.IGNORED
            case Refuse():
                await self._refuse(chat, keys, verdict)
                return Outcome.REFUSED
            case Pair():
                await self._pair(chat, keys, verdict)
                return Outcome.REFUSED
            case Reject():
                await self._heard(chat)
                await self._settle(chat, keys, rejected(chat, verdict.reason), verdict.answer)
                return Outcome.REJECTED
            case RunCommand():
                await self._heard(chat)
                await self._settle(chat, keys, None, await self._run(chat, verdict))
                return Outcome.COMMAND
            case Hold():
                await self._heard(chat)
                held = await self._hold(chat, keys, profile, verdict)
                return Outcome.PROMPT if held else Outcome.REJECTED
            case Prompt():
                await self._heard(chat)
                await self._prompt(chat, keys, profile, verdict)
                return Outcome.PROMPT
            case _:
                assert_never(verdict)

    async def _settle(
        self,
        chat: InboundChat,
        keys: list[str],
        record: Record | None,
        reply: str | Answer | None,
        also: Callable[[BridgeTx], None] | None = None,
    ) -> None:
        """The message handled, in one transaction: its platform ids, its audit record, what
        else its verdict writes (`also`) and the reply it gets (with its buttons)."""
        answer = Answer(reply) if isinstance(reply, str) else reply
        async with self._store.write() as tx:
            tx.mark_seen(keys, None)
            if record is not None:
                tx.emit(record)
            if also is not None:
                also(tx)
            if answer is not None:
                kind = DeliveryKind.COMMAND_REPLY
                tx.enqueue(new_id("dlv"), chat.route, kind, answer.text, answer.buttons)

    async def _ignore(self, chat: InboundChat, keys: list[str], verdict: Ignore) -> None:
        route = chat.route
        sender = "operator" if verdict.operator else "other"
        self._metrics.messages_ignored.inc(workspace=route.workspace_id, sender=sender)
        await self._settle(chat, keys, ignored(chat, verdict.reason), None)
        log.debug("message ignored", extra={"platform": route.platform, "reason": verdict.reason})

    async def _refuse(self, chat: InboundChat, keys: list[str], verdict: Refuse) -> None:
        route = chat.route
        self._metrics.messages_in.inc(workspace=route.workspace_id, trust=Trust.UNTRUSTED_EXTERNAL)
        sender_key = f"{route.platform}:{route.workspace_id}:{chat.sender_id}"
        async with self._refusing:
            answer = None
            if verdict.answer is not None:
                replied_at = await self._store.refusal_replied_at(sender_key)
                if refusal_due(replied_at, self._runtime.clock.wall()):
                    answer = verdict.answer
            record = refused(chat, verdict.reason, replied=answer is not None)
            replied = (lambda tx: tx.refusal_replied(sender_key)) if answer is not None else None
            await self._settle(chat, keys, record, answer, also=replied)
        log.info("message refused", extra={"platform": route.platform, "reason": verdict.reason})

    async def _pair(self, chat: InboundChat, keys: list[str], verdict: Pair) -> None:
        """A pairing code, a reminder, or nothing past the cap, instead of the refusal."""
        assert self._pairing is not None  # decide pairs only where the bridge does
        pairing = self._pairing
        step = await pairing.consider(chat, verdict.workspace)
        reason = f"{verdict.reason}; {step.outcome}"
        record = refused(chat, reason, replied=step.answer is not None)
        await self._settle(chat, keys, record, None, also=lambda tx: pairing.record(tx, chat, step))
        log.info("pairing", extra={"workspace": verdict.workspace.id, "outcome": step.outcome})

    async def _heard(self, chat: InboundChat) -> None:
        """An operator's message, for the agent or not: counted, and a conversation the
        platform had refused (the bot blocked or removed) takes messages again."""
        route = chat.route
        self._metrics.messages_in.inc(workspace=route.workspace_id, trust=Trust.TRUSTED_OPERATOR)
        await self._outbox.route_works_again(route)

    async def _run(self, chat: InboundChat, verdict: RunCommand) -> str | Answer:
        """The command's answer: about the notification's session when it answers one and
        the command is about a session, else about this conversation."""
        command, sender, notification = verdict.command, verdict.sender, verdict.notification
        operator_id = sender.operator.id
        if notification is not None and isinstance(command, Command):
            answer = await self._commands.run_on(
                command, notification.session_id, sender.workspace, operator_id=operator_id
            )
            if answer is not None:
                return answer
        pointed = await self._pointing.decision(chat) if answers_approval(command) else None
        return await self._commands.run(
            command,
            chat.route,
            sender.workspace,
            operator_id=operator_id,
            direct=chat.is_direct,
            decision=pointed,
        )

    async def _hold(
        self, chat: InboundChat, keys: list[str], profile: PlatformProfile | None, verdict: Hold
    ) -> bool:
        """A message with files (or one behind it) is held until they are in; it goes to the
        agent a plain prompt would, framed the same way. Whether any of it will."""
        assert self._files is not None  # decide holds only where the bridge takes files
        sender, notification = verdict.sender, verdict.notification
        context = await self._pointing.context(chat, notification)
        addressee = Addressee(
            session_id=notification.session_id if notification else None,
            direct=chat.is_direct,
            correlation_id=notification.notification_id if notification else None,
        )
        return await self._files.receive(
            chat,
            keys,
            sender.operator.id,
            MAX_PROMPT_CHARS,
            frame=lambda words: compose(words, notification, context, sender.workspace, profile),
            addressee=addressee,
        )

    async def _prompt(
        self, chat: InboundChat, keys: list[str], profile: PlatformProfile | None, verdict: Prompt
    ) -> None:
        """Stored for the agent with the message's platform ids, in the runtime's
        transaction. A reply to a notification goes to the agent that raised it; the context
        comes from the message (and its thread, read before this conversation becomes a
        session)."""
        sender, notification = verdict.sender, verdict.notification
        context = await self._pointing.context(chat, notification)
        text = compose(verdict.words, notification, context, sender.workspace, profile)
        if notification is not None:
            session_id = notification.session_id
        else:
            session_id = await self._sessions.session_for(
                chat.route, sender.workspace, direct=chat.is_direct
            )
        message = operator_prompt(
            text,
            chat.route,
            operator_id=sender.operator.id,
            message_ref=chat.message_ref,
            correlation_id=notification.notification_id if notification else chat.dedupe_keys[0],
        )
        notice = verdict.cut_notice
        held = await held_now(self._runtime, session_id, zone(sender.workspace.timezone))

        def also(w: Writer, message_id: str) -> None:
            tx = self._store.join(w)
            tx.mark_seen(keys, message_id)
            self._sessions.note_name(tx, named(chat, sender.operator.id))
            if held is not None:  # a budget holds the turn: said now, not when it ends
                tx.enqueue(
                    new_id("dlv"), chat.route, DeliveryKind.COMMAND_REPLY, held.text, held.buttons
                )
            if notice is not None:
                truncated = InboundTruncated(message_id=message_id, length=len(chat.text or ""))
                tx.emit(truncated, session_id)
                tx.enqueue(new_id("dlv"), chat.route, DeliveryKind.COMMAND_REPLY, notice)

        await self._runtime.submit(session_id, message, also=also)
