"""A trusted operator's message with files, at the platform's ack: decide which files are
wanted (nothing is downloaded for anyone else: trust was decided before this), say at once
which are not and why, and hold the message durably, its platform ids marked seen in the same
transaction. The downloads run after the ack (`downloads.py`)."""

from __future__ import annotations

from collections.abc import Callable

from bridge import texts
from bridge.attachments.downloads import Downloads, skipped_notice
from bridge.attachments.held import Addressee, HeldFile, HeldMessage, Undescribed
from bridge.attachments.policy import plan
from bridge.commands import parse
from bridge.events import InboundFilesHeld, InboundFilesSkipped, InboundRejected
from bridge.store import BridgeStore
from bridge.types import DeliveryKind, InboundChat
from config.schema import AttachmentsConfig
from runtime.ids import new_id


class FileIntake:
    def __init__(self, config: AttachmentsConfig, store: BridgeStore, downloads: Downloads) -> None:
        self._config = config
        self._store = store
        self.downloads = downloads

    def wants(self, chat: InboundChat) -> bool:
        """Whether `chat` is held: it has files, or it is a prompt (not a command) arriving
        while an earlier message of its conversation is held, and must not overtake it."""
        if chat.files:
            return True
        text = (chat.text or "").strip()
        return bool(text) and parse(text) is None and self.downloads.holding(chat.route)

    async def receive(
        self,
        chat: InboundChat,
        keys: list[str],
        operator_id: str,
        max_chars: int,
        *,
        frame: Callable[[str], str],
        addressee: Addressee,
    ) -> bool:
        """Hold `chat` for its files; False when nothing of it can reach the agent (the
        sender is told why). Text over `max_chars` is cut, and the sender told; `frame` adds
        what the message points at (a notification, quoted context) to the operator's words."""
        route = chat.route
        text = chat.text or ""
        cut = len(text) > max_chars
        text = text[:max_chars]
        source = self.downloads.source(route.platform)
        planned = plan(chat.files, self._config, source.max_bytes if source else None)
        wanted, skipped = planned.wanted, planned.skipped
        held_id = new_id("held")
        nothing = not wanted and not planned.undescribed and not text.strip()
        held = HeldMessage(
            id=held_id,
            route=route,
            operator_id=operator_id,
            text=frame(text),
            message_ref=chat.message_ref,
            dedupe_keys=keys,
            correlation_id=addressee.correlation_id or chat.dedupe_keys[0],
            addressee=addressee,
            files=[HeldFile.of(w) for w in wanted],
            undescribed=[
                Undescribed(file_id=f.file_id, kind=f.kind, url=f.url) for f in planned.undescribed
            ],
        )
        async with self._store.write() as tx:
            tx.mark_seen(keys, None)
            if cut:
                notice = texts.TRUNCATED.format(length=len(chat.text or ""), limit=max_chars)
                tx.enqueue(new_id("dlv"), route, DeliveryKind.COMMAND_REPLY, notice)
            if skipped:
                tx.emit(
                    InboundFilesSkipped(pending_id=held_id, skipped=[s.text() for s in skipped])
                )
                notice = skipped_notice(skipped, nothing_left=nothing)
                tx.enqueue(new_id("dlv"), route, DeliveryKind.COMMAND_REPLY, notice)
            if nothing:
                rejected = InboundRejected(
                    platform=route.platform,
                    workspace_id=route.workspace_id,
                    sender_id=chat.sender_id,
                    reason="files_not_passed",
                )
                tx.emit(rejected)
            else:
                tx.hold(held_id, route.platform, route.workspace_id, held.model_dump_json())
                tx.emit(
                    InboundFilesHeld(
                        pending_id=held_id,
                        platform=route.platform,
                        workspace_id=route.workspace_id,
                        files=len(wanted) + len(planned.undescribed),
                    )
                )
        if not nothing:
            self.downloads.kick(held)
        return not nothing
