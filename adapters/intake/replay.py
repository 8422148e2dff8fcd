"""The one replayer: what waits in the intake, handed to each platform's decoder, now and each
time `wake` is called: oldest first within a place (a conversation, as the door named it), the
places side by side, each with a worker of its own, so a place whose bot is not running (or
whose requests keep failing) holds up no other. A request is removed once handed on (the
removals of a moment share one write); one handed on twice after a crash is dropped by the
bridge's own dedupe (its platform id was marked seen)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Mapping

from adapters.intake.record import Decoder, Intake, NotReady
from bridge import cancel_and_wait
from bridge.placement import Placement
from bridge.store.records import StoredRequest

log = logging.getLogger(__name__)

ATTEMPTS = 5  # a request that fails this often is dropped, with an error in the log
NOT_READY_S = 300.0  # how long a bot that is not running (restarting) is waited for
BATCH = 100
MOST_IN_FLIGHT = 5_000  # read no further ahead than this
BEHIND_S = 10.0  # a request waiting longer than this is said in the log (every BEHIND_S)

Place = tuple[str, str, str]  # platform, workspace, place


class Replayer:
    def __init__(self, intake: Intake, placement: Placement | None = None) -> None:
        """`placement`: whose requests are replayed here (replicas: the workspaces served
        here; the others' wait in the intake for the replica serving them)."""
        self._intake = intake
        self._placement = placement or Placement()
        self._decoders: Mapping[str, Decoder] = {}
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._queues: dict[Place, list[StoredRequest]] = {}
        self._workers: dict[Place, asyncio.Task[None]] = {}
        self._in_flight: set[int] = set()  # read, not yet removed
        self._handled: list[int] = []  # handed on, to be removed
        self._read_up_to = 0  # the newest id read: what is stored after it is read next
        self._said_behind = 0.0
        self.handled = 0

    def start(self, decoders: Mapping[str, Decoder]) -> None:
        """`decoders` by platform name: read as each request is handed on."""
        self._decoders = decoders
        self._wake.set()
        self._task = asyncio.get_running_loop().create_task(self._read_all(), name="replay")

    def wake(self) -> None:
        self._wake.set()

    def read_again(self) -> None:
        """A workspace is served here now: what was stored for it before is read again."""
        self._read_up_to = 0
        self._wake.set()

    async def leave(self, workspace_id: str) -> None:
        """The workspace is no longer served here: what was read for it is put back, for
        the replica serving it (a request cut off mid-way is handled there again, deduped)."""
        places = [place for place in self._workers if place[1] == workspace_id]
        await cancel_and_wait(*(self._workers[place] for place in places))

    async def close(self) -> None:
        tasks = [t for t in (self._task, *self._workers.values()) if t is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._task = None
        self._workers.clear()
        with contextlib.suppress(Exception):  # what is not removed is handed on again, deduped
            await self._remove_handled()

    async def _read_all(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            try:
                await self._remove_handled()
                if len(self._in_flight) >= MOST_IN_FLIGHT:  # read on once some are done
                    continue
                asked_after = self._read_up_to
                batch = await self._intake.pending(asked_after, BATCH)
            except Exception:  # the store failed: the next wake, or a second, tries again
                log.exception("stored requests not read; trying again")
                await asyncio.sleep(1.0)
                self._wake.set()
                continue
            if served := [r for r in batch if self._placement.serves(r.workspace_id)]:
                self._say_if_behind(served[0])
            if self._read_up_to < asked_after:
                # A worker put requests back while this read was under way: read from there
                # again (those of this batch already taken are skipped as in flight).
                self._wake.set()
            elif batch:
                self._read_up_to = batch[-1].id
            serves = self._placement.serves
            new = [
                request
                for request in batch
                if request.id not in self._in_flight and serves(request.workspace_id)
            ]
            for request in new:
                self._in_flight.add(request.id)
                place = (request.platform, request.workspace_id, request.place)
                self._queues.setdefault(place, []).append(request)
                if place not in self._workers:
                    self._workers[place] = asyncio.get_running_loop().create_task(
                        self._work(place),
                        name="replay-place",
                        context=self._placement.context(request.workspace_id),
                    )
            if len(batch) == BATCH:  # more wait behind these
                self._wake.set()

    async def _work(self, place: Place) -> None:
        queue = self._queues[place]
        try:
            while queue:
                request = queue[0]
                await self._replay(request)
                queue.pop(0)
                self._handled.append(request.id)
                self.handled += 1
                self._wake.set()
        except Exception:  # the store failed to count an attempt: read again in a second
            log.exception("stored requests of a conversation not handed on; trying again")
            await asyncio.sleep(1.0)
            self._wake.set()
        finally:
            for left in self._queues.pop(place, []):  # read again from the store
                self._in_flight.discard(left.id)
                self._read_up_to = min(self._read_up_to, left.id - 1)
            del self._workers[place]

    async def _remove_handled(self) -> None:
        handled, self._handled = self._handled, []
        if handled:
            try:
                await self._intake.done(handled)
            except BaseException:
                self._handled.extend(handled)
                raise
            self._in_flight.difference_update(handled)

    def _say_if_behind(self, oldest: StoredRequest) -> None:
        """Turns are falling behind what comes in: say how far, at most every `BEHIND_S`."""
        now = time.time()
        waited = now - oldest.received_at
        if waited > BEHIND_S and now - self._said_behind > BEHIND_S:
            self._said_behind = now
            fields = {"oldest_waited_s": round(waited, 1), "places": len(self._workers)}
            log.warning("stored requests wait to be handled", extra=fields)

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
