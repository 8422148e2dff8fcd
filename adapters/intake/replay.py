"""The one replayer: what waits in the intake, handed to each platform's decoder, now and each
time `wake` is called: oldest first within a conversation (a place, as the door named it), the
conversations side by side. A request is removed once handed on; one handed on twice after a
crash is dropped by the bridge's own dedupe (its platform id was marked seen)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Mapping

from adapters.intake.record import Decoder, Intake, NotReady
from bridge.store import StoredRequest

log = logging.getLogger(__name__)

ATTEMPTS = 5  # a request that fails this often is dropped, with an error in the log
NOT_READY_S = 300.0  # how long a bot that is not running (restarting) is waited for
BATCH = 100
BEHIND_S = 10.0  # a request waiting longer than this is said in the log (every BEHIND_S)


class Replayer:
    def __init__(self, intake: Intake) -> None:
        self._intake = intake
        self._decoders: Mapping[str, Decoder] = {}
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._said_behind = 0.0
        self.handled = 0

    def start(self, decoders: Mapping[str, Decoder]) -> None:
        """`decoders` by platform name: read as each request is handed on."""
        self._decoders = decoders
        self._wake.set()
        self._task = asyncio.get_running_loop().create_task(self._replay_all(), name="replay")

    def wake(self) -> None:
        self._wake.set()

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _replay_all(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            try:
                while batch := await self._intake.pending(limit=BATCH):
                    self._say_if_behind(batch[0])
                    await asyncio.gather(*(self._in_order(q) for q in _by_place(batch)))
                    await self._intake.done([request.id for request in batch])
                    self.handled += len(batch)
            except Exception:  # the store failed: the next wake, or a second, tries again
                log.exception("stored requests not read; trying again")
                await asyncio.sleep(1.0)
                self._wake.set()

    def _say_if_behind(self, oldest: StoredRequest) -> None:
        """Turns are falling behind what comes in: say how far, at most every `BEHIND_S`."""
        now = time.time()
        waited = now - oldest.received_at
        if waited > BEHIND_S and now - self._said_behind > BEHIND_S:
            self._said_behind = now
            log.warning(
                "stored requests wait to be handled", extra={"oldest_waited_s": round(waited, 1)}
            )

    async def _in_order(self, requests: list[StoredRequest]) -> None:
        for request in requests:
            await self._replay(request)

    async def _replay(self, request: StoredRequest) -> None:
        """Hand one request to its platform's decoder; tried again (holding the later ones
        of its place back, in order) until it is handled, or dropped after `ATTEMPTS`
        failures."""
        fields = {"stored": request.id, "platform": request.platform}
        attempts = request.attempts
        waited = 0.0
        while True:
            decoder = self._decoders.get(request.platform)
            if decoder is None:
                log.error("stored request for a platform not served here; dropped", extra=fields)
                return
            try:
                await decoder.decode(request)
                return
            except NotReady:
                if waited < NOT_READY_S:
                    waited += 1.0
                    await asyncio.sleep(1.0)
                    continue
                log.error("stored request dropped: its bot never came up", extra=fields)
                return
            except Exception as exc:
                attempts += 1
                error = f"{type(exc).__name__}: {str(exc)[:300]}"
                log.warning(
                    "stored request failed", exc_info=True, extra={**fields, "attempt": attempts}
                )
                if attempts >= ATTEMPTS:
                    log.error("stored request dropped after its attempts", extra=fields)
                    return
                await self._intake.failed(request.id, error)
                await asyncio.sleep(min(0.5 * 2**attempts, 8.0))


def _by_place(batch: list[StoredRequest]) -> list[list[StoredRequest]]:
    """One queue per place, each in the order its requests came: a chat's messages stay in
    order, and one conversation's requests do not wait behind another's."""
    queues: dict[tuple[str, str, str], list[StoredRequest]] = {}
    for request in batch:
        where = (request.platform, request.workspace_id, request.place)
        queues.setdefault(where, []).append(request)
    return list(queues.values())
