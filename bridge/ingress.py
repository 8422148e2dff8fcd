"""Chat message in: dedupe, trust, bad input, commands, then an operator prompt stored
durably before the adapter acknowledges the platform (DESIGN §3, Ingress)."""

from __future__ import annotations

import logging
import sqlite3
from enum import StrEnum

from bridge import texts
from bridge.commands import Command, CommandName, UnknownCommand, parse
from bridge.metrics import Metrics
from bridge.outbox import Outbox
from bridge.sessions import Sessions
from bridge.status import status_text
from bridge.trust import Refused, Trusted, classify
from bridge.types import DeliveryKind, InboundChat, Route
from config.schema import SwitchboardConfig
from runtime import (
    InboundMessage,
    MessageKind,
    Origin,
    Priority,
    Provenance,
    QueueMode,
    Runtime,
    StaleRunError,
    Trust,
    UnknownRunError,
)
from runtime.events import Event
from runtime.ids import new_id
from runtime.store import Writer

log = logging.getLogger(__name__)

MAX_PROMPT_CHARS = 50_000
REFUSAL_REPLY_INTERVAL_S = 3600.0


class Outcome(StrEnum):
    DUPLICATE = "duplicate"
    REFUSED = "refused"
    REJECTED = "rejected"
    COMMAND = "command"
    PROMPT = "prompt"


class Ingress:
    def __init__(
        self,
        config: SwitchboardConfig,
        runtime: Runtime,
        sessions: Sessions,
        outbox: Outbox,
        metrics: Metrics,
    ) -> None:
        self._config = config
        self._runtime = runtime
        self._store = runtime.store
        self._sessions = sessions
        self._outbox = outbox
        self._metrics = metrics

    async def receive(self, chat: InboundChat) -> Outcome:
        """Handle one platform message. When this returns, it is durably handled.

        The platform ids are marked seen in the same transaction that stores the outcome,
        so of two copies arriving at once (a retry racing the original), one loses there.
        """
        try:
            return await self._receive(chat)
        except sqlite3.IntegrityError:
            return Outcome.DUPLICATE

    async def _receive(self, chat: InboundChat) -> Outcome:
        keys = [f"{chat.route.platform}:{chat.route.workspace_id}:{k}" for k in chat.dedupe_keys]
        if await self._seen(keys):
            return Outcome.DUPLICATE
        verdict = classify(self._config, chat)
        if isinstance(verdict, Refused):
            await self._refuse(chat, keys, verdict)
            return Outcome.REFUSED
        self._metrics.messages_in.inc(workspace=verdict.workspace.id, trust="trusted_operator")
        await self._outbox.route_works_again(chat.route)
        if chat.text is None:
            kind = chat.attachment_kind or "attachment"
            await self._reply(chat, keys, texts.NOT_TEXT.format(kind=kind), "non_text")
            return Outcome.REJECTED
        if not chat.text.strip():
            await self._reply(chat, keys, texts.EMPTY, "empty")
            return Outcome.REJECTED
        command = parse(chat.text)
        if command is not None:
            await self._reply(chat, keys, await self._command(command, chat, verdict), None)
            return Outcome.COMMAND
        await self._prompt(chat, keys, verdict)
        return Outcome.PROMPT

    # -- steps -------------------------------------------------------------------------

    async def _seen(self, keys: list[str]) -> bool:
        marks = ",".join("?" * len(keys))
        rows = await self._store.fetch_all(
            f"SELECT 1 FROM inbound_seen WHERE dedupe_key IN ({marks}) LIMIT 1", keys
        )
        return bool(rows)

    @staticmethod
    def _mark_seen(w: Writer, keys: list[str], message_id: str | None) -> None:
        for key in keys:
            w.execute(
                "INSERT INTO inbound_seen (dedupe_key, message_id, seen_at) VALUES (?, ?, ?)",
                (key, message_id, w.now()),
            )

    async def _refuse(self, chat: InboundChat, keys: list[str], verdict: Refused) -> None:
        self._metrics.messages_in.inc(workspace=chat.route.workspace_id, trust="untrusted_external")
        sender_key = f"{chat.route.platform}:{chat.route.workspace_id}:{chat.sender_id}"
        rows = await self._store.fetch_all(
            "SELECT replied_at FROM refusals WHERE sender_key = ?", (sender_key,)
        )
        now = self._runtime.clock.wall()
        reply = verdict.workspace is not None and (
            not rows or now - rows[0]["replied_at"] >= REFUSAL_REPLY_INTERVAL_S
        )
        intent_id = new_id("dlv")
        async with self._store.write() as w:
            self._mark_seen(w, keys, None)
            w.emit(
                Event(
                    "inbound_refused",
                    None,
                    {
                        "platform": chat.route.platform,
                        "workspace_id": chat.route.workspace_id,
                        "sender_id": chat.sender_id,
                        "conversation_id": chat.route.conversation_id,
                        "reason": verdict.reason,
                        "replied": reply,
                    },
                )
            )
            if reply:
                w.execute(
                    "INSERT INTO refusals (sender_key, replied_at) VALUES (?, ?) ON"
                    " CONFLICT (sender_key) DO UPDATE SET replied_at = excluded.replied_at",
                    (sender_key, now),
                )
                reply_text = (
                    texts.NOT_ALLOWED_HERE if verdict.operator_elsewhere else texts.NOT_AN_OPERATOR
                )
                Outbox.enqueue(w, intent_id, chat.route, DeliveryKind.COMMAND_REPLY, reply_text)
        log.info(
            "message refused", extra={"platform": chat.route.platform, "reason": verdict.reason}
        )
        if reply:
            self._outbox.wake(chat.route.conversation_key)

    async def _reply(
        self, chat: InboundChat, keys: list[str], text: str, rejected: str | None
    ) -> None:
        async with self._store.write() as w:
            self._mark_seen(w, keys, None)
            if rejected:
                w.emit(
                    Event(
                        "inbound_rejected",
                        None,
                        {
                            "platform": chat.route.platform,
                            "workspace_id": chat.route.workspace_id,
                            "sender_id": chat.sender_id,
                            "reason": rejected,
                        },
                    )
                )
            Outbox.enqueue(w, new_id("dlv"), chat.route, DeliveryKind.COMMAND_REPLY, text)
        self._outbox.wake(chat.route.conversation_key)

    async def _prompt(self, chat: InboundChat, keys: list[str], verdict: Trusted) -> None:
        text = chat.text or ""
        notice = None
        if len(text) > MAX_PROMPT_CHARS:
            notice = texts.TRUNCATED.format(length=len(text), limit=MAX_PROMPT_CHARS)
            text = text[:MAX_PROMPT_CHARS]
        session_id = await self._sessions.session_for(chat.route, verdict.workspace)
        message = InboundMessage(
            text=text,
            kind=MessageKind.OPERATOR_PROMPT,
            origin=Origin.OPERATOR,
            trust=Trust.TRUSTED_OPERATOR,
            priority=Priority.INTERJECT,
            delivery_surface=chat.route.platform,
            provenance=Provenance(
                sender=verdict.operator.id,
                surface=chat.route.platform,
                binding=chat.route.workspace_id,
                platform_message_ref=chat.message_ref,
                reply_route=chat.route.to_json(),
                correlation_id=chat.dedupe_keys[0],
            ),
        )
        notice_id = new_id("dlv")

        def also(w: Writer, message_id: str) -> None:
            self._mark_seen(w, keys, message_id)
            if notice:
                w.emit(
                    Event(
                        "inbound_truncated",
                        session_id,
                        {"message_id": message_id, "length": len(chat.text or "")},
                    )
                )
                Outbox.enqueue(w, notice_id, chat.route, DeliveryKind.COMMAND_REPLY, notice)

        await self._runtime.submit(session_id, message, also=also)
        if notice:
            self._outbox.wake(chat.route.conversation_key)

    # -- commands ----------------------------------------------------------------------

    async def _command(
        self, command: Command | UnknownCommand, chat: InboundChat, verdict: Trusted
    ) -> str:
        if isinstance(command, UnknownCommand):
            return texts.UNKNOWN_COMMAND.format(command=command.text, help_hint=texts.HELP_HINT)
        route: Route = chat.route
        match command.name:
            case CommandName.HELP:
                return texts.HELP
            case CommandName.NEW:
                await self._sessions.session_for(route, verdict.workspace, fresh=True)
                return texts.NEW_SESSION
            case CommandName.STATUS:
                session_id = self._sessions.session_of(route)
                return await status_text(self._runtime, session_id, verdict.workspace)
            case CommandName.QUEUE:
                session_id = await self._sessions.session_for(route, verdict.workspace)
                current = self._runtime.status(session_id).mode
                try:
                    mode = QueueMode(command.argument.lower())
                except ValueError:
                    return texts.QUEUE_USAGE.format(mode=current)
                await self._runtime.set_queue_mode(session_id, mode)
                return texts.QUEUE_SET.format(mode=mode)
            case CommandName.STOP:
                return await self._stop(route)
        raise AssertionError(f"unhandled command {command!r}")

    async def _stop(self, route: Route) -> str:
        session_id = self._sessions.session_of(route)
        run_id = self._runtime.status(session_id).run_id if session_id else None
        if session_id is None or run_id is None:
            return texts.NOTHING_TO_STOP
        try:
            result = await self._runtime.stop(session_id, run_id)
        except (StaleRunError, UnknownRunError):
            return texts.NOTHING_TO_STOP
        return texts.STOPPED if result.status == "stopped" else texts.ALREADY_STOPPED
