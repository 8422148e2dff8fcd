"""A trusted operator's message with files, as the replayer hands it on: which files are wanted
and what its sender is told of the rest (`decide_files`, called by ingress's `decide`), then the
message held durably, its platform ids marked seen in the same transaction (`FileIntake.hold`).
The downloads run after (`downloads.py`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bridge import texts
from bridge.attachments.downloads import Downloads, skipped_notice
from bridge.attachments.held import Addressee, HeldFile, HeldMessage, Undescribed
from bridge.attachments.policy import plan
from bridge.commands import parse
from bridge.events import InboundFilesHeld, InboundFilesSkipped, InboundRejected
from bridge.store.store import BridgeStore
from bridge.types import DeliveryKind, InboundChat
from config.schema import AttachmentsConfig
from runtime.ids import new_id


@dataclass(frozen=True, slots=True)
class FilesDecided:
    """What becomes of a message with files (or behind one): held with the files wanted
    (`held`), or, with none wanted and no words, nothing of it passed on (`held` None); what
    its sender is told at once either way (its words cut, files skipped and why)."""

    held: HeldMessage | None
    notices: tuple[str, ...]
    skipped: tuple[str, ...]  # each skipped file, with why
    files: int  # how many the held message waits for


def decide_files(
    chat: InboundChat,
    keys: list[str],
    operator_id: str,
    max_chars: int,
    *,
    frame: Callable[[str], str],
    addressee: Addressee,
    config: AttachmentsConfig,
    download_limit: int | None,
) -> FilesDecided:
    """Without I/O: which files are wanted (nothing is downloaded for anyone else: trust was
    decided before this), what the sender is told of the rest, and the held message. Text over
    `max_chars` is cut, and the sender told; `frame` adds what the message points at (a
    notification, quoted context) to the operator's words."""
    text = chat.text or ""
    planned = plan(chat.files, config, download_limit)
    notices = []
    if len(text) > max_chars:
        notices.append(texts.TRUNCATED.format(length=len(text), limit=max_chars))
        text = text[:max_chars]
    files = len(planned.wanted) + len(planned.undescribed)
    nothing = not files and not text.strip()
    if planned.skipped:
        notices.append(skipped_notice(planned.skipped, nothing_left=nothing))
    skipped = tuple(s.text() for s in planned.skipped)
    if nothing:
        return FilesDecided(None, tuple(notices), skipped, 0)
    held = HeldMessage(
        id=new_id("held"),
        route=chat.route,
        operator_id=operator_id,
        text=frame(text),
        message_ref=chat.message_ref,
        dedupe_keys=keys,
        correlation_id=addressee.correlation_id or chat.dedupe_keys[0],
        addressee=addressee,
        files=[HeldFile.of(w) for w in planned.wanted],
        undescribed=[
            Undescribed(file_id=f.file_id, kind=f.kind, url=f.url) for f in planned.undescribed
        ],
    )
    return FilesDecided(held, tuple(notices), skipped, files)


class FileIntake:
    def __init__(self, config: AttachmentsConfig, store: BridgeStore, downloads: Downloads) -> None:
        self.config = config
        self._store = store
        self.downloads = downloads

    def wants(self, chat: InboundChat) -> bool:
        """Whether `chat` is held: it has files, or it is a prompt (not a command) arriving
        while an earlier message of its conversation is held, and must not overtake it."""
        if chat.files:
            return True
        text = (chat.text or "").strip()
        return bool(text) and parse(text) is None and self.downloads.holding(chat.route)

    def download_limit(self, platform: str) -> int | None:
        """The most the platform lets a bot download, if it has a limit (or no source)."""
        source = self.downloads.source(platform)
        return source.max_bytes if source else None

    async def hold(self, chat: InboundChat, keys: list[str], decided: FilesDecided) -> None:
        """Write what was decided in one transaction, its platform ids marked seen there;
        the downloads start once it has committed."""
        route, held = chat.route, decided.held
        async with self._store.write() as tx:
            tx.mark_seen(keys, None)
            for notice in decided.notices:
                tx.enqueue(new_id("dlv"), route, DeliveryKind.COMMAND_REPLY, notice)
            if decided.skipped:
                pending_id = held.id if held is not None else new_id("held")
                tx.emit(InboundFilesSkipped(pending_id=pending_id, skipped=list(decided.skipped)))
            if held is None:
                tx.emit(
                    InboundRejected(
                        platform=route.platform,
                        workspace_id=route.workspace_id,
                        sender_id=chat.sender_id,
                        reason="files_not_passed",
                    )
                )
                return
            tx.hold(held.id, route.platform, route.workspace_id, held.model_dump_json())
            tx.emit(
                InboundFilesHeld(
                    pending_id=held.id,
                    platform=route.platform,
                    workspace_id=route.workspace_id,
                    files=decided.files,
                )
            )
        self.downloads.kick(held)
