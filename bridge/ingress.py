"""Chat message in (DESIGN §3, Ingress): read everything the decision needs
(`bridge/facts.py`), decide without I/O (`bridge/verdicts.py`), and write what the verdict
holds in one transaction. When `receive` returns the message is durably handled (before the
replayer lets go of the request its door stored): an operator's prompt is stored with its
platform ids and what its operator is told at once; any other message is recorded as handled,
with its audit record and its reply. A Slack slash command (`command`) takes the same path;
its answer goes back to its sender alone. Commands run in `commands.py`."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from typing import assert_never

from bridge.attachments.intake import FileIntake
from bridge.commands import Command, Commands, parse
from bridge.events import InboundTruncated
from bridge.facts import Reader
from bridge.metrics import Metrics
from bridge.outbox import Outbox
from bridge.pairing import Pairing, record_step
from bridge.places import named
from bridge.platforms import Platforms
from bridge.sessions import Sessions
from bridge.store.store import BridgeStore
from bridge.store.transaction import BridgeTx
from bridge.trust import Refused
from bridge.types import Answer, DeliveryKind, InboundChat
from bridge.verdicts import (
    Duplicate,
    Effects,
    Hold,
    Ignore,
    Outcome,
    Prompt,
    Refuse,
    Reject,
    RunCommand,
    Tell,
    Verdict,
    decide,
)
from config.current import CurrentConfig
from runtime.engine import Runtime
from runtime.errors import StoreConflictError
from runtime.ids import new_id
from runtime.messages import Trust
from runtime.store.writer import Writer

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Handled:
    outcome: Outcome
    private: str | None = None  # a slash command's answer, for its sender alone


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
        self._reader = Reader(config, runtime, store, sessions, platforms, files, pairing)
        self._runtime = runtime
        self._store = store
        self._sessions = sessions
        self._outbox = outbox
        self._commands = commands
        self._metrics = metrics
        self._files = files
        # A stranger's message is read, decided and written one at a time: two messages of
        # one stranger must not both find that no refusal was sent yet, nor two strangers
        # both find room for a pairing code under the cap.
        self._refusing = asyncio.Lock()

    async def receive(self, chat: InboundChat) -> Outcome:
        """Handle one platform message. When this returns, it is durably handled.

        The platform ids are marked seen in the same transaction that stores the outcome,
        so of two copies arriving at once (a retry racing the original), one loses there.
        """
        return (await self._handle(chat)).outcome

    async def command(self, chat: InboundChat, *, invoked_as: str) -> str:
        """Run a command for only its sender to see (a Slack slash command, `invoked_as`
        `/switchboard`); its answer. Its buttons are left out: they would name the commands
        they run, and no delivery keeps them."""
        handled = await self._handle(chat, invoked_as)
        assert handled.private is not None  # every private verdict answers
        return handled.private

    async def _handle(self, chat: InboundChat, private: str | None = None) -> Handled:
        keys = [f"{chat.route.platform}:{chat.route.workspace_id}:{k}" for k in chat.dedupe_keys]
        try:
            chat = await self._reader.pressed(chat)
            sender = await self._reader.sender(chat)
            one_at_a_time = self._refusing if isinstance(sender, Refused) else None
            async with one_at_a_time or contextlib.nullcontext():
                facts = await self._reader.facts(chat, sender, keys, private)
                verdict = decide(chat, sender, facts)
                return await self._apply(chat, keys, verdict, private)
        except StoreConflictError:
            return Handled(Outcome.DUPLICATE)

    async def _apply(
        self, chat: InboundChat, keys: list[str], verdict: Verdict, private: str | None
    ) -> Handled:
        route = chat.route
        match verdict:
            case Duplicate():
                return Handled(Outcome.DUPLICATE)
            case Ignore(effects=effects, operator=operator):
                sender = "operator" if operator else "other"
                self._metrics.messages_ignored.inc(workspace=route.workspace_id, sender=sender)
                return await self._settle(chat, keys, effects, Outcome.IGNORED, private)
            case Refuse(effects=effects):
                self._count(chat, Trust.UNTRUSTED_EXTERNAL)
                return await self._settle(chat, keys, effects, Outcome.REFUSED, private)
            case Reject(effects=effects):
                await self._heard(chat)
                return await self._settle(chat, keys, effects, Outcome.REJECTED, private)
            case Tell(answer=answer):
                self._count(chat, Trust.TRUSTED_OPERATOR)
                return Handled(Outcome.COMMAND, answer)
            case RunCommand():
                await self._heard(chat, private)
                said = await self._run(chat, verdict)
                anew = await self._pressed_anew(chat, verdict)
                effects = Effects(replies=(said,), rewrites=anew)
                return await self._settle(chat, keys, effects, Outcome.COMMAND, private)
            case Hold(decided=decided):
                await self._heard(chat)
                assert self._files is not None  # facts hold back only where it takes files
                await self._files.hold(chat, keys, decided)
                return Handled(Outcome.PROMPT if decided.held else Outcome.REJECTED)
            case Prompt():
                await self._heard(chat)
                await self._submit(chat, keys, verdict)
                return Handled(Outcome.PROMPT)
            case _:
                assert_never(verdict)

    # -- writing what the verdict holds ----------------------------------------------------

    async def _settle(
        self,
        chat: InboundChat,
        keys: list[str],
        effects: Effects,
        outcome: Outcome,
        private: str | None,
    ) -> Handled:
        """The message handled, in one transaction: its platform ids and its effects. A
        slash command's ids are not kept (Slack sends none twice) and its reply is returned
        to go to its sender alone."""
        async with self._store.write() as tx:
            if private is None:
                tx.mark_seen(keys, None)
            self._write(tx, chat, effects, private=private is not None)
        if effects.record is not None:
            level = logging.DEBUG if outcome is Outcome.IGNORED else logging.INFO
            fields = {"platform": chat.route.platform, "reason": effects.record.reason}
            log.log(level, "message settled", extra={**fields, "outcome": outcome.value})
        if private is None:
            return Handled(outcome)
        said = effects.replies[0] if effects.replies else Answer("")
        return Handled(outcome, said.text)

    def _write(
        self, tx: BridgeTx, chat: InboundChat, effects: Effects, *, private: bool = False
    ) -> None:
        """Every verdict's effects, written the one way (in the message's own transaction)."""
        if effects.record is not None:
            tx.emit(effects.record)
        if effects.refusal_told is not None:
            tx.refusal_replied(effects.refusal_told)
        if effects.pairing is not None:
            record_step(tx, chat, effects.pairing)
        kind = DeliveryKind.COMMAND_REPLY
        for message_id, shown in () if private else effects.rewrites:
            tx.enqueue(new_id("dlv"), chat.route, kind, shown.text, shown.buttons, message_id)
        for answer in () if private else effects.replies:
            tx.enqueue(new_id("dlv"), chat.route, kind, answer.text, answer.buttons)

    async def _submit(self, chat: InboundChat, keys: list[str], verdict: Prompt) -> None:
        """Stored for the agent in the runtime's transaction, with the message's platform
        ids and what the operator is told at once. A conversation new to the bot gets its
        session first (its thread was read before it became one)."""
        sender = verdict.sender
        session_id = verdict.session_id or await self._sessions.session_for(
            chat.route, sender.workspace, direct=chat.is_direct
        )

        def also(w: Writer, message_id: str) -> None:
            tx = self._store.join(w)
            tx.mark_seen(keys, message_id)
            self._sessions.note_name(tx, named(chat, sender.operator.id))
            self._write(tx, chat, verdict.effects)
            if verdict.cut_from is not None:
                tx.emit(
                    InboundTruncated(message_id=message_id, length=verdict.cut_from), session_id
                )

        await self._runtime.submit(session_id, verdict.message, also=also)

    async def _run(self, chat: InboundChat, verdict: RunCommand) -> Answer:
        """The command's answer: about the notification's session when it answers one and
        the command is about a session, else about this conversation."""
        command, sender = verdict.command, verdict.sender
        operator_id = sender.operator.id
        about = verdict.notification_session
        answer: str | Answer | None = None
        if about is not None and isinstance(command, Command):
            answer = await self._commands.run_on(
                command, about, sender.workspace, operator_id=operator_id
            )
        if answer is None:
            answer = await self._commands.run(
                command,
                chat.route,
                sender.workspace,
                operator_id=operator_id,
                direct=chat.is_direct,
                decision=verdict.decision,
            )
        return Answer(answer) if isinstance(answer, str) else answer

    async def _pressed_anew(
        self, chat: InboundChat, verdict: RunCommand
    ) -> tuple[tuple[str, Answer], ...]:
        """A press of a button under a command's answer (a `/schedules` list): that message
        as it reads now, to show in its place (its buttons too: Resume where Pause was)."""
        if not chat.pressed or chat.button is None or chat.replied_to is None or not chat.text:
            return ()
        command = parse(chat.text)
        if not isinstance(command, Command):
            return ()
        anew = await self._commands.after_press(command, verdict.sender.workspace)
        return ((chat.replied_to, anew),) if anew is not None else ()

    # -- counting ----------------------------------------------------------------------

    def _count(self, chat: InboundChat, trust: Trust) -> None:
        self._metrics.messages_in.inc(workspace=chat.route.workspace_id, trust=trust)

    async def _heard(self, chat: InboundChat, private: str | None = None) -> None:
        """An operator's message, for the agent or not: counted, and a conversation the
        platform had refused (the bot blocked or removed) takes messages again (a slash
        command reaches the bot even where it cannot post)."""
        self._count(chat, Trust.TRUSTED_OPERATOR)
        if private is None:
            await self._outbox.route_works_again(chat.route)
