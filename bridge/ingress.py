"""Chat message in: dedupe, trust, bad input, commands, then an operator prompt stored
durably before the adapter acknowledges the platform (DESIGN §3, Ingress). This module
classifies and dispatches; commands run in `commands.py`."""

from __future__ import annotations

import logging
from enum import StrEnum

from bridge import texts
from bridge.attachments.held import Addressee
from bridge.attachments.intake import FileIntake
from bridge.bindings import addressed, names_the_bot, respond_to
from bridge.commands import Command, Commands, answers_approval, parse
from bridge.events import InboundIgnored, InboundRefused, InboundRejected, InboundTruncated
from bridge.metrics import Metrics
from bridge.outbox import Outbox
from bridge.pairing import Pairing
from bridge.places import named
from bridge.platforms import Platforms
from bridge.prompt import operator_prompt
from bridge.replies import Pointing, compose
from bridge.sessions import Sessions
from bridge.store import BridgeStore, NotificationPost
from bridge.trust import Refused, Trusted, classify
from bridge.types import DeliveryKind, InboundChat
from config.current import CurrentConfig
from runtime import (
    Runtime,
    Trust,
)
from runtime.errors import StoreConflictError, UnknownSessionError
from runtime.ids import new_id
from runtime.store import Writer

log = logging.getLogger(__name__)

MAX_PROMPT_CHARS = 50_000
REFUSAL_REPLY_INTERVAL_S = 3600.0


def _stranger(verdict: Trusted | Refused) -> bool:
    """Refused as someone who is not an operator of a workspace (not: in a chat not allowed)."""
    return (
        isinstance(verdict, Refused)
        and verdict.workspace is not None
        and not verdict.operator_elsewhere
    )


class Outcome(StrEnum):
    DUPLICATE = "duplicate"
    REFUSED = "refused"
    IGNORED = "ignored"  # group chatter not addressed to the bot: recorded, not answered
    REJECTED = "rejected"
    COMMAND = "command"
    PROMPT = "prompt"


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
        self._outbox = outbox
        self._commands = commands
        self._metrics = metrics
        self._platforms = platforms
        self._pointing = Pointing(store, sessions, platforms)
        self._files = files
        self._pairing = pairing

    async def receive(self, chat: InboundChat) -> Outcome:
        """Handle one platform message. When this returns, it is durably handled.

        The platform ids are marked seen in the same transaction that stores the outcome,
        so of two copies arriving at once (a retry racing the original), one loses there.
        """
        try:
            return await self._receive(chat)
        except StoreConflictError:
            return Outcome.DUPLICATE

    async def _receive(self, chat: InboundChat) -> Outcome:
        keys = [f"{chat.route.platform}:{chat.route.workspace_id}:{k}" for k in chat.dedupe_keys]
        if await self._store.seen(keys):
            return Outcome.DUPLICATE
        profile = self._platforms.profile(chat.route.platform)
        verdict = classify(self._config(), chat, profile)
        if self._pairing is not None and profile is not None and _stranger(verdict):
            assert isinstance(verdict, Refused) and verdict.workspace is not None
            paired = await self._pairing.operator(chat, verdict.workspace, profile)
            if paired is not None:  # an operator by pairing, not by the file
                verdict = classify(self._config(), chat, profile, also=(paired,))
        # An operator's answer to a notification is for the bot wherever it is written.
        trusted = isinstance(verdict, Trusted)
        notification = await self._pointing.notification(chat) if trusted else None
        unaddressed = self._unaddressed(chat, verdict, answers=notification is not None)
        if unaddressed is not None:
            await self._ignore(chat, keys, unaddressed, operator=isinstance(verdict, Trusted))
            return Outcome.IGNORED
        if isinstance(verdict, Refused):
            if self._pairs(chat, verdict):
                assert self._pairing is not None and verdict.workspace is not None
                await self._pairing.stranger(chat, keys, verdict.workspace, verdict.reason)
            else:
                await self._refuse(chat, keys, verdict)
            return Outcome.REFUSED
        self._metrics.messages_in.inc(workspace=verdict.workspace.id, trust=Trust.TRUSTED_OPERATOR)
        await self._outbox.route_works_again(chat.route)
        if notification is not None and not self._knows(notification):
            await self._reply(chat, keys, texts.NOTIFICATION_GONE, "notification_gone")
            return Outcome.REJECTED
        if self._files is not None and self._files.wants(chat):  # held for files, in order
            return await self._hold(chat, keys, verdict, notification)
        if chat.text is None:
            kind = chat.attachment_kind or "attachment"
            await self._reply(chat, keys, texts.NOT_TEXT.format(kind=kind), "non_text")
            return Outcome.REJECTED
        if not chat.text.strip() and not chat.context:  # a forward alone has no words
            await self._reply(chat, keys, texts.EMPTY, "empty")
            return Outcome.REJECTED
        command = parse(chat.text)
        if command is not None:
            answer = None
            if notification is not None and isinstance(command, Command):
                answer = await self._commands.run_on(
                    command,
                    notification.session_id,
                    verdict.workspace,
                    operator_id=verdict.operator.id,
                )
            if answer is None:
                pointed = await self._pointing.decision(chat) if answers_approval(command) else None
                answer = await self._commands.run(
                    command,
                    chat.route,
                    verdict.workspace,
                    operator_id=verdict.operator.id,
                    direct=chat.is_direct,
                    decision=pointed,
                )
            await self._reply(chat, keys, answer, None)
            return Outcome.COMMAND
        await self._prompt(chat, keys, verdict, notification)
        return Outcome.PROMPT

    async def _hold(
        self,
        chat: InboundChat,
        keys: list[str],
        verdict: Trusted,
        notification: NotificationPost | None,
    ) -> Outcome:
        """A message with files (or one behind it) is held until they are in; it goes to the
        agent a plain prompt would, framed the same way."""
        assert self._files is not None
        context = await self._pointing.context(chat, notification)
        profile = self._platforms.profile(chat.route.platform)
        addressee = Addressee(
            session_id=notification.session_id if notification else None,
            direct=chat.is_direct,
            correlation_id=notification.notification_id if notification else None,
        )
        held = await self._files.receive(
            chat,
            keys,
            verdict.operator.id,
            MAX_PROMPT_CHARS,
            frame=lambda words: compose(words, notification, context, verdict.workspace, profile),
            addressee=addressee,
        )
        return Outcome.PROMPT if held else Outcome.REJECTED

    def _pairs(self, chat: InboundChat, verdict: Refused) -> bool:
        """A DM from someone who is not an operator, where the workspace pairs: it gets a
        pairing code instead of the refusal. Groups and channels never pair, and a press on
        one of the bot's buttons is no request to pair, wherever it is."""
        workspace = verdict.workspace
        return (
            self._pairing is not None
            and chat.is_direct
            and not chat.pressed
            and _stranger(verdict)
            and workspace is not None
            and workspace.pairing.enabled
        )

    def _knows(self, notification: NotificationPost) -> bool:
        try:
            self._runtime.session(notification.session_id)
        except UnknownSessionError:
            return False
        return True

    # -- steps -------------------------------------------------------------------------

    def _unaddressed(
        self, chat: InboundChat, verdict: Trusted | Refused, *, answers: bool
    ) -> str | None:
        """Why a group or channel message is none of the bot's business, or None. A stranger
        there is refused only when they speak to the bot; an operator is heard as the admin's
        `respond_to` says (their commands, and their answers to a notification, always). DMs
        are always for the bot."""
        if chat.is_direct:
            return None
        in_agent_thread = self._sessions.session_of(chat.route) is not None
        if isinstance(verdict, Refused):
            if verdict.workspace is None or verdict.operator_elsewhere:
                return None
            if names_the_bot(chat, in_agent_thread=in_agent_thread):
                return None
            return "a stranger's message, not addressed to the bot"
        if answers or (chat.text is not None and parse(chat.text) is not None):
            return None
        wanted = respond_to(verdict.workspace, chat.route)
        if addressed(chat, wanted, in_agent_thread=in_agent_thread):
            return None
        return f"not addressed to the bot (respond_to: {', '.join(wanted)})"

    async def _ignore(
        self, chat: InboundChat, keys: list[str], reason: str, *, operator: bool
    ) -> None:
        route = chat.route
        self._metrics.messages_ignored.inc(
            workspace=route.workspace_id, sender="operator" if operator else "other"
        )
        async with self._store.write() as tx:
            tx.mark_seen(keys, None)
            tx.emit(
                InboundIgnored(
                    platform=route.platform,
                    workspace_id=route.workspace_id,
                    sender_id=chat.sender_id,
                    conversation_id=route.conversation_id,
                    reason=reason,
                )
            )
        log.debug("message ignored", extra={"platform": route.platform, "reason": reason})

    async def _refuse(self, chat: InboundChat, keys: list[str], verdict: Refused) -> None:
        route = chat.route
        self._metrics.messages_in.inc(workspace=route.workspace_id, trust=Trust.UNTRUSTED_EXTERNAL)
        sender_key = f"{route.platform}:{route.workspace_id}:{chat.sender_id}"
        replied_at = await self._store.refusal_replied_at(sender_key)
        now = self._runtime.clock.wall()
        reply = verdict.workspace is not None and (
            replied_at is None or now - replied_at >= REFUSAL_REPLY_INTERVAL_S
        )
        async with self._store.write() as tx:
            tx.mark_seen(keys, None)
            refused = InboundRefused(
                platform=route.platform,
                workspace_id=route.workspace_id,
                sender_id=chat.sender_id,
                conversation_id=route.conversation_id,
                reason=verdict.reason,
                replied=reply,
            )
            tx.emit(refused)
            if reply:
                tx.refusal_replied(sender_key)
                answer = (
                    texts.NOT_ALLOWED_HERE if verdict.operator_elsewhere else texts.NOT_AN_OPERATOR
                )
                tx.enqueue(new_id("dlv"), route, DeliveryKind.COMMAND_REPLY, answer)
        log.info("message refused", extra={"platform": route.platform, "reason": verdict.reason})

    async def _reply(
        self, chat: InboundChat, keys: list[str], text: str, rejected: str | None
    ) -> None:
        async with self._store.write() as tx:
            tx.mark_seen(keys, None)
            if rejected:
                tx.emit(
                    InboundRejected(
                        platform=chat.route.platform,
                        workspace_id=chat.route.workspace_id,
                        sender_id=chat.sender_id,
                        reason=rejected,
                    )
                )
            tx.enqueue(new_id("dlv"), chat.route, DeliveryKind.COMMAND_REPLY, text)

    async def _prompt(
        self,
        chat: InboundChat,
        keys: list[str],
        verdict: Trusted,
        notification: NotificationPost | None,
    ) -> None:
        text = chat.text or ""
        notice = None
        if len(text) > MAX_PROMPT_CHARS:
            notice = texts.TRUNCATED.format(length=len(text), limit=MAX_PROMPT_CHARS)
            text = text[:MAX_PROMPT_CHARS]
        # A reply to a notification goes to the agent that raised it; the context comes from
        # the message (and its thread, read before this conversation becomes a session).
        context = await self._pointing.context(chat, notification)
        profile = self._platforms.profile(chat.route.platform)
        text = compose(text, notification, context, verdict.workspace, profile)
        if notification is not None:
            session_id = notification.session_id
        else:
            session_id = await self._sessions.session_for(
                chat.route, verdict.workspace, direct=chat.is_direct
            )
        message = operator_prompt(
            text,
            chat.route,
            operator_id=verdict.operator.id,
            message_ref=chat.message_ref,
            correlation_id=notification.notification_id if notification else chat.dedupe_keys[0],
        )

        def also(w: Writer, message_id: str) -> None:
            tx = self._store.join(w)
            tx.mark_seen(keys, message_id)
            self._sessions.note_name(tx, named(chat, verdict.operator.id))
            if notice:
                tx.emit(
                    InboundTruncated(message_id=message_id, length=len(chat.text or "")),
                    session_id,
                )
                tx.enqueue(new_id("dlv"), chat.route, DeliveryKind.COMMAND_REPLY, notice)

        await self._runtime.submit(session_id, message, also=also)
