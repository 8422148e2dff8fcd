"""Held messages to prompts: download each file with the platform's `FileSource`, check it,
then submit the prompt with its files in one transaction that also releases the hold.

A message with files is stored (held) and its platform ids marked seen as the replayer hands
it on (`intake.py`), so a slow download never holds up the conversation's next messages, and
a crash before the submit leaves the hold in the store: `start` resumes every one. The submit
and the release commit together, so a held message becomes exactly one prompt."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import replace

from bridge import texts
from bridge.attachments.held import HeldMessage
from bridge.attachments.policy import (
    Checked,
    Skipped,
    Wanted,
    check,
    described,
    name_of,
    plan,
)
from bridge.attachments.source import FetchError, FileSource
from bridge.events import InboundFilesSkipped, InboundRejected
from bridge.placement import Placement
from bridge.prompt import operator_prompt
from bridge.sessions import Sessions
from bridge.store.store import BridgeStore
from bridge.store.transaction import BridgeTx
from bridge.types import DeliveryKind, InboundFile, Route
from config.current import CurrentConfig
from runtime.engine import Runtime
from runtime.ids import new_id
from runtime.store.writer import Writer
from runtime.tasks import cancel_and_wait
from runtime.transcript import AttachmentBlock

log = logging.getLogger(__name__)

ATTEMPTS = 5  # a download that fails this often (retryably) is given up, and the sender told
FIRST_BACKOFF_S = 1.0
SUBMIT_ATTEMPTS = 3  # a held message that cannot be submitted this often is given up, and said


def skipped_notice(skipped: list[Skipped], *, nothing_left: bool = False) -> str:
    notice = texts.FILES_NOT_PASSED.format(items="; ".join(s.text() for s in skipped))
    return f"{notice} {texts.FILES_NOTHING_LEFT}" if nothing_left else notice


class Downloads:
    def __init__(
        self,
        config: CurrentConfig,
        runtime: Runtime,
        store: BridgeStore,
        sessions: Sessions,
        placement: Placement,
    ) -> None:
        self._config = config
        self._runtime = runtime
        self._store = store
        self._sessions = sessions
        self._sources: dict[str, FileSource] = {}
        self._placement = placement
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._workspace_of: dict[asyncio.Task[None], str] = {}
        self._newest: dict[str, asyncio.Task[None]] = {}  # by conversation key

    def attach(self, source: FileSource) -> None:
        self._sources[source.platform] = source

    def source(self, platform: str) -> FileSource | None:
        return self._sources.get(platform)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Resume every message held when the process last stopped (or crashed), of the
        workspaces served here; at the stop, stop downloading: what is held stays held, and
        resumes on the next start."""
        await self.serve()
        yield
        await cancel_and_wait(*self._tasks.values())

    async def serve(self, workspace_id: str | None = None) -> None:
        """Resume what is held for the workspace (or for every one served here)."""
        for held in await self._store.held():
            if workspace_id in (None, held.workspace_id) and self._placement.serves(
                held.workspace_id
            ):
                self.kick(HeldMessage.model_validate_json(held.body), tried=held.attempts)

    async def leave(self, workspace_id: str) -> None:
        """The workspace is no longer served here: its downloads stop, their holds kept."""
        mine = [t for t, w in self._workspace_of.items() if w == workspace_id]
        await cancel_and_wait(*mine)

    def holding(self, route: Route) -> bool:
        """Whether a message of this conversation is held: a later one must wait behind it."""
        task = self._newest.get(route.home.conversation_key)
        return task is not None and not task.done()

    def kick(self, held: HeldMessage, *, tried: int = 0) -> None:
        """Download `held`'s files and submit it, in the background (once per message), after
        the conversation's earlier held messages: the agent gets them in the order sent."""
        if held.id in self._tasks:
            return
        key = held.route.home.conversation_key
        before = self._newest.get(key)
        workspace_id = held.route.workspace_id
        task = asyncio.get_running_loop().create_task(
            self._run(held, before, tried),
            name=f"files-{held.id}",
            context=self._placement.context(workspace_id),
        )
        self._tasks[held.id] = self._newest[key] = task
        self._workspace_of[task] = workspace_id

        def done(_: asyncio.Task[None]) -> None:
            self._workspace_of.pop(task, None)
            self._tasks.pop(held.id, None)
            if self._newest.get(key) is task:
                del self._newest[key]

        task.add_done_callback(done)

    async def idle(self) -> None:
        """Until no held message is being worked on."""
        while self._tasks:
            await asyncio.wait(list(self._tasks.values()))

    async def _run(self, held: HeldMessage, before: asyncio.Task[None] | None, tried: int) -> None:
        """Submit `held`, tried again after a failure that is not a download's (a store or
        runtime error) while the conversation's later messages wait behind it; given up after
        `SUBMIT_ATTEMPTS` in all (`tried` before a restart count), and the sender told. A stop
        keeps the hold for the next start, which tries at least once more."""
        for attempt in range(min(tried + 1, SUBMIT_ATTEMPTS), SUBMIT_ATTEMPTS + 1):
            try:
                await self._attempt(held, before)
                return
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.exception(
                    "held message not submitted",
                    extra={"pending_id": held.id, "attempt": attempt},
                )
                error = type(exc).__name__
                async with self._store.write() as tx:
                    if attempt < SUBMIT_ATTEMPTS:
                        tx.hold_failed(held.id, error)
                    else:
                        tx.release(held.id)
                        tx.emit(
                            InboundRejected(
                                platform=held.route.platform,
                                workspace_id=held.route.workspace_id,
                                sender_id=held.operator_id,
                                reason=f"held_not_submitted: {error}",
                            )
                        )
                        notice = texts.HELD_NOT_PASSED.format(error=error)
                        tx.enqueue(new_id("dlv"), held.route, DeliveryKind.COMMAND_REPLY, notice)
                        return
            await self._runtime.clock.sleep(FIRST_BACKOFF_S * 2 ** (attempt - 1))

    async def _attempt(self, held: HeldMessage, before: asyncio.Task[None] | None) -> None:
        checked: list[Checked] = []
        skipped: list[Skipped] = []
        wanted = [f.wanted() for f in held.files]
        for file in held.undescribed:
            more, unwanted = await self._describe(held, file.file())
            wanted += more
            skipped += unwanted
        for one in wanted:
            result = await self._download(held, one)
            if isinstance(result, Checked):
                checked.append(result)
            else:
                skipped.append(result)
        if before is not None:
            await asyncio.wait([before])
        await self._submit(held, checked, skipped)

    async def _describe(
        self, held: HeldMessage, file: InboundFile
    ) -> tuple[list[Wanted], list[Skipped]]:
        """Ask the platform what `file` is, then plan it like any other."""
        platform = held.route.platform
        source = self._sources.get(platform)
        name = name_of(file)
        if source is None:
            return [], [Skipped(name, texts.FILE_NO_DOWNLOADS.format(platform=platform))]
        delay = FIRST_BACKOFF_S
        for attempt in range(1, ATTEMPTS + 1):
            try:
                found = await source.describe(held.route.workspace_id, file)
                break
            except FetchError as exc:
                log.warning(
                    "file description failed",
                    extra={"pending_id": held.id, "attempt": attempt, "error": str(exc)},
                )
                if not exc.retryable or attempt == ATTEMPTS:
                    return [], [Skipped(name, texts.FILE_DOWNLOAD_FAILED.format(error=str(exc)))]
                await self._runtime.clock.sleep(delay)
                delay *= 2
        if not described(found):
            found = replace(found, name="a file")
        planned = plan((found,), self._config().attachments, source.max_bytes)
        return planned.wanted, planned.skipped

    async def _download(self, held: HeldMessage, wanted: Wanted) -> Checked | Skipped:
        platform = held.route.platform
        source = self._sources.get(platform)
        if source is None:
            return Skipped(wanted.name, texts.FILE_NO_DOWNLOADS.format(platform=platform))
        delay = FIRST_BACKOFF_S
        for attempt in range(1, ATTEMPTS + 1):
            try:
                data = await source.fetch(held.route.workspace_id, wanted.file, wanted.limit)
            except FetchError as exc:
                log.warning(
                    "file download failed",
                    extra={"pending_id": held.id, "attempt": attempt, "error": str(exc)},
                )
                if not exc.retryable or attempt == ATTEMPTS:
                    why = texts.FILE_DOWNLOAD_FAILED.format(error=str(exc))
                    return Skipped(wanted.name, why)
                await self._runtime.clock.sleep(delay)
                delay *= 2
                continue
            return check(wanted, data, self._config().attachments)
        raise AssertionError("unreachable: the last attempt returns")

    async def _submit(
        self, held: HeldMessage, checked: list[Checked], skipped: list[Skipped]
    ) -> None:
        route = held.route
        if not checked and not held.text.strip():
            async with self._store.write() as tx:
                tx.release(held.id)
                self._tell(tx, held, skipped, nothing_left=True)
            return
        workspace = self._config.workspace(route.workspace_id)
        if workspace is None:  # removed by a reload while its files downloaded
            raise LookupError(f"workspace {route.workspace_id} is no longer configured")
        session_id = held.addressee.session_id or await self._sessions.session_for(
            route, workspace, direct=held.addressee.direct
        )
        attachments = tuple(
            AttachmentBlock(
                id=new_id("att"),
                name=c.name,
                media_type=c.media_type,
                form=c.form,
                size=len(c.data),
            )
            for c in checked
        )
        message = operator_prompt(
            held.text,
            route,
            operator_id=held.operator_id,
            message_ref=held.message_ref,
            correlation_id=held.correlation_id,
            private=held.addressee.direct,
            attachments=attachments,
        )

        def also(w: Writer, message_id: str) -> None:
            tx = self._store.join(w)
            tx.release(held.id)
            tx.seen_as(held.dedupe_keys, message_id)
            if skipped:
                self._tell(tx, held, skipped)

        files = {a.id: c.data for a, c in zip(attachments, checked, strict=True)}
        await self._runtime.submit(session_id, message, also=also, files=files)
        log.info(
            "held message submitted",
            extra={"pending_id": held.id, "files": len(checked), "skipped": len(skipped)},
        )

    @staticmethod
    def _tell(
        tx: BridgeTx, held: HeldMessage, skipped: list[Skipped], *, nothing_left: bool = False
    ) -> None:
        """Say which files were not passed on, and why (and when nothing was)."""
        if not skipped and not nothing_left:
            return
        tx.emit(InboundFilesSkipped(pending_id=held.id, skipped=[s.text() for s in skipped]))
        text = (
            skipped_notice(skipped, nothing_left=nothing_left)
            if skipped
            else texts.FILES_NOTHING_LEFT
        )
        tx.enqueue(new_id("dlv"), held.route, DeliveryKind.COMMAND_REPLY, text)
