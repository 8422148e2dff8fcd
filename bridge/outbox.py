"""Durable delivery (DESIGN §3, Delivery): every outgoing message is an intent written before
any send; one worker per conversation sends them in order, chunk by chunk, recording each
accepted chunk so a restart never re-sends what already landed.

A failed chunk is sent again, never skipped: the rest of a reply is not lost to one error.
Where the send certainly did not leave (a refused connection), it simply goes again. Where its
outcome is unknown (a 5xx, a read timeout, a crash mid-send), the platform is asked first if it
can tell (Slack), so nothing is posted twice; where it cannot (Telegram), the chunk is sent
again: a repeated part is far better than a lost half."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from bridge.events import DeliveryAccepted, DeliveryFailed, RouteFailed
from bridge.metrics import Metrics
from bridge.placement import Placement
from bridge.platforms import Platforms
from bridge.split import split
from bridge.store.records import Intent
from bridge.store.store import BridgeStore
from bridge.transport import Call, DeliveryError, Post, Rewriting, Transport
from bridge.types import DeliveryStatus, Route, workspace_of_key
from runtime.clock import Clock
from runtime.tasks import cancel_and_wait

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 6  # failures in a row on one chunk before the intent is failed
MAX_RETRY_DELAY_S = 60.0
HELD_RETRY_DELAY_S = 2.0  # how often a delivery whose bot is held tries again
LOOK_AROUND_S = 2.0  # replicas: how often what others enqueued is looked for (the hint's backstop)
LEAVE_GRACE_S = 5.0  # replicas: how long sends under way may go on when a workspace is let go
# A text this short is split on the event loop: about 50 us of CPU (300 us for a table this
# long), where handing it to a thread and back costs 90 us more (issue 45).
SPLIT_ON_LOOP_CHARS = 200


class Outbox:
    """Sends what the bridge store's intents hold; woken by the commit that enqueued one."""

    def __init__(
        self,
        store: BridgeStore,
        clock: Clock,
        metrics: Metrics,
        platforms: Platforms,
        placement: Placement,
    ) -> None:
        self._store = store
        store.on_enqueue = self.wake
        self._placement = placement  # whose deliveries are sent here
        self._clock = clock
        self._metrics = metrics
        self._platforms = platforms  # their pacers are shared with progress
        self._workers: dict[str, asyncio.Task[None]] = {}
        self.failed_routes: set[str] = set()  # conversation keys the platform refused
        self._look_again: set[str] = set()
        self._closing = False

    @contextlib.asynccontextmanager
    async def delivering(self) -> AsyncIterator[None]:
        """Each intent is sent once enqueued (`wake`), until the stop: then the workers stop
        mid-send, and what they did not finish resumes on the next start. Replicas: what
        another replica enqueued for a workspace served here is sent at its hint (`heard`),
        else found within `LOOK_AROUND_S`."""
        self.failed_routes.update(f.conversation_key for f in await self._store.failed_routes())
        looking = None
        if not self._placement.everything:
            looking = asyncio.get_running_loop().create_task(self._look_around(), name="outbox")
        yield
        self._closing = True
        await cancel_and_wait(looking, *self._workers.values())

    @contextlib.asynccontextmanager
    async def resuming(self) -> AsyncIterator[None]:
        """Every intent a previous run left pending or sending, sent (of the workspaces
        served here)."""
        await self.serve()
        yield

    async def serve(self, workspace_id: str | None = None) -> None:
        """Send what waits for the workspace (or every one served here)."""
        for conversation_key in await self._store.open_conversations():
            if workspace_id is None or workspace_of_key(conversation_key) == workspace_id:
                self.wake(conversation_key)

    async def reload_failed(self, workspace_id: str) -> None:
        """The workspace's conversations the platform refused, as its last holder left them."""
        self.failed_routes.difference_update(
            k for k in list(self.failed_routes) if workspace_of_key(k) == workspace_id
        )
        self.failed_routes.update(
            f.conversation_key for f in await self._store.failed_routes(workspace_id)
        )

    async def leave(self, workspace_id: str, *, graceful: bool = False) -> None:
        """The workspace is no longer served here: its sends stop (resumed where it is).
        `graceful` (let go to another replica): those under way get `LEAVE_GRACE_S` to end
        first, so that no chunk is sent twice (Telegram cannot tell that one landed)."""
        workers = [t for k, t in self._workers.items() if workspace_of_key(k) == workspace_id]
        if graceful and workers:
            await asyncio.wait(workers, timeout=LEAVE_GRACE_S)
        await cancel_and_wait(*workers)

    async def _look_around(self) -> None:
        while True:
            await self._clock.sleep(LOOK_AROUND_S)
            try:
                await self.serve()
            except Exception as exc:
                log.warning("deliveries not looked for", extra={"error": repr(exc)})

    def wake(self, conversation_key: str) -> None:
        if self._closing or not self._placement.serves_key(conversation_key):
            return  # the replica serving its workspace sends it
        if conversation_key in self._workers:
            # Its worker may be reading the queue right now, from before this intent's
            # commit: have it look once more before it stops.
            self._look_again.add(conversation_key)
            return
        self._workers[conversation_key] = asyncio.get_running_loop().create_task(
            self._work(conversation_key),
            name=f"outbox-{conversation_key}",
            context=self._placement.context(workspace_of_key(conversation_key)),
        )

    async def route_works_again(self, route: Route) -> None:
        """A message came from a conversation marked failed: the platform takes it again."""
        key = route.home.conversation_key
        if key in self.failed_routes:
            self.failed_routes.discard(key)
            async with self._store.write() as tx:
                tx.route_works(key)

    async def idle(self) -> None:
        """Until no delivery is in progress: for tests and a clean shutdown."""
        while self._workers:
            await asyncio.gather(*self._workers.values(), return_exceptions=True)

    async def _work(self, conversation_key: str) -> None:
        # One process (no replicas): every intent is enqueued here, and its commit wakes this
        # (`wake`). So when the one just sent was the only one waiting as it was read, the
        # worker stops unless woken since, without reading the queue again (issue 45).
        try:
            while True:
                self._look_again.discard(conversation_key)
                intent, more = await self._store.next_intent(conversation_key)
                if intent is not None:
                    await self._deliver(intent)
                    if more or not self._placement.everything:
                        continue
                if conversation_key not in self._look_again:
                    return
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("delivery worker failed", extra={"conversation": conversation_key})
        finally:
            self._workers.pop(conversation_key, None)

    async def _deliver(self, intent: Intent) -> None:
        transport = self._platforms.transport(intent.route.platform)
        if transport is None:
            await self._finish(
                intent,
                DeliveryStatus.FAILED,
                f"no {intent.route.platform} adapter is running to deliver this",
            )
            return
        profile = transport.profile
        # Parsing and measuring a long answer (a 20,000-character table) takes about a second of
        # pure Python: off the event loop, so acks, progress and other sends go on meanwhile.
        limit = profile.limits.max_chars_for(intent.kind, buttons=bool(intent.buttons))
        args = (intent.text, limit, lambda s: len(profile.render(s)))
        if len(intent.text) <= SPLIT_ON_LOOP_CHARS:
            chunks = split(*args)
        else:
            chunks = await asyncio.to_thread(split, *args)
        rewritable = intent.replaces and len(chunks) == 1 and isinstance(transport, Rewriting)
        if rewritable and await self._rewrite(intent, transport, profile.render(chunks[0])):
            return  # else it is posted anew, below
        pacer = self._platforms.pacer(profile.name)
        # Whether the next chunk may already have landed: it was in flight when the last run
        # stopped, or its last attempt had an unknown outcome.
        unsure = intent.status is DeliveryStatus.SENDING
        await self._update(intent)
        attempts = intent.attempts
        last_post: tuple[int, str] | None = None  # the last chunk's platform id, if it has one
        failures = 0  # in a row, on this chunk
        held: str | None = None  # why its bot holds it, as recorded (the last error)
        chunk = intent.chunks_sent
        while chunk < len(chunks):
            if unsure:
                unsure = False
                if await transport.delivered(intent.route, intent.id, chunk):
                    chunk, failures = chunk + 1, 0
                    await self._update(intent, chunks=chunk)
                    continue  # it landed; None (cannot tell) or False: send it (again)
            ticket = await pacer.acquire(intent.route, Call.POST)
            posted: str | None = None
            try:
                posted = await transport.send(
                    Post(
                        intent.route,
                        profile.render(chunks[chunk]),
                        intent.kind,
                        intent.id,
                        chunk,
                        intent.buttons if chunk == len(chunks) - 1 else (),
                    )
                )
            except DeliveryError as exc:
                failure: DeliveryError | None = exc
            else:
                failure = None
            finally:
                ticket.done()
            if failure is not None and failure.held:  # waits for its bot: no attempt spent
                if held != str(failure):
                    held = str(failure)
                    await self._update(intent, error=held)
                await self._clock.sleep(HELD_RETRY_DELAY_S)
                continue
            held = None
            if failure is not None:
                attempts += 1
                failures += 1
                if not failure.retryable or failures >= MAX_ATTEMPTS:
                    why = str(failure)
                    if failure.landed == "unknown":
                        why += " (it may have arrived)"
                    await self._finish(
                        intent,
                        DeliveryStatus.FAILED,
                        f"{why}; {chunk} of {len(chunks)} parts delivered",
                        attempts=attempts,
                        chunks=chunk,
                        route_gone=failure.route_gone,
                    )
                    return
                unsure = failure.landed == "unknown"
                await self._retry_later(intent, failure, attempts, chunk, failures)
                continue
            post = (chunk, posted) if posted else None
            chunk, failures = chunk + 1, 0
            if chunk < len(chunks):
                await self._update(intent, attempts=attempts, chunks=chunk, post=post)
            else:
                last_post = post
        await self._finish(
            intent,
            DeliveryStatus.ACCEPTED_BY_TRANSPORT,
            None,
            attempts=attempts,
            chunks=chunk,
            post=last_post,
        )

    async def _rewrite(self, intent: Intent, transport: Transport, text: str) -> bool:
        """The message `intent.replaces` rewritten in place, recorded as this delivery's post
        (a reply to it, or a press of a button posted before presses named their delivery,
        finds this one); False when it cannot be (gone, too old),
        and the delivery is posted anew. A failure that may pass is tried again, as a send
        is (a rewrite done twice is done once)."""
        assert intent.replaces is not None and isinstance(transport, Rewriting)
        pacer = self._platforms.pacer(transport.profile.name)
        post = Post(intent.route, text, intent.kind, intent.id, 0, intent.buttons)
        attempts, failures = intent.attempts, 0
        while True:
            ticket = await pacer.acquire(intent.route, Call.EDIT)
            failure: DeliveryError | None = None
            try:
                await transport.rewrite(post, intent.replaces)
            except DeliveryError as exc:
                failure = exc
            finally:
                ticket.done()
            if failure is None:
                done = DeliveryStatus.ACCEPTED_BY_TRANSPORT
                post_id = (0, intent.replaces)
                await self._finish(
                    intent, done, None, attempts=attempts, chunks=1, post=post_id, rewritten=True
                )
                return True
            if failure.held:
                await self._clock.sleep(HELD_RETRY_DELAY_S)
                continue
            attempts, failures = attempts + 1, failures + 1
            if not failure.retryable or failures >= MAX_ATTEMPTS:
                why = {"delivery_id": intent.id, "error": str(failure)}
                log.info("message not rewritten in place; posting it anew", extra=why)
                return False
            await self._retry_later(intent, failure, attempts, 0, failures)

    async def _retry_later(
        self, intent: Intent, exc: DeliveryError, attempts: int, chunk: int, failures: int
    ) -> None:
        """Record the failure, then wait: for a Retry-After, whatever counted where the send
        counted waits with it (the pacer holds them all back); else this conversation waits,
        longer after each failure in a row."""
        if exc.retry_after is not None:
            delay = exc.retry_after
            self._platforms.pacer(intent.route.platform).back_off(intent.route, Call.POST, delay)
        else:
            delay = min(MAX_RETRY_DELAY_S, 2.0 ** (failures - 1))
        await self._update(intent, attempts=attempts, error=str(exc))
        log.warning(
            "delivery retry",
            extra={
                "delivery_id": intent.id,
                "attempt": attempts,
                "chunk": chunk,
                "delay_s": delay,
                "landed": exc.landed,
            },
        )
        if exc.retry_after is None:
            await self._clock.sleep(delay)

    async def _update(
        self,
        intent: Intent,
        *,
        attempts: int | None = None,
        chunks: int | None = None,
        error: str | None = None,
        post: tuple[int, str] | None = None,
    ) -> None:
        """`post`: a chunk just accepted, and the platform's id of it, recorded with it."""
        async with self._store.write() as tx:
            tx.update_intent(
                intent.id, DeliveryStatus.SENDING, attempts=attempts, chunks=chunks, error=error
            )
            if post is not None:
                tx.record_post(intent.id, post[0], intent.route, post[1], intent.kind)

    async def _finish(
        self,
        intent: Intent,
        status: DeliveryStatus,
        error: str | None,
        *,
        attempts: int | None = None,
        chunks: int | None = None,
        route_gone: bool = False,
        post: tuple[int, str] | None = None,
        rewritten: bool = False,
    ) -> None:
        """`rewritten`: `post` names a message rewritten in place, this delivery's now."""
        failed = status is DeliveryStatus.FAILED
        async with self._store.write() as tx:
            tx.finish_intent(intent.id, status, error, attempts=attempts, chunks=chunks)
            if post is not None:
                tx.record_post(
                    intent.id, post[0], intent.route, post[1], intent.kind, rewritten=rewritten
                )
            if route_gone:
                home = intent.route.home
                tx.route_failed(home, error or "")
                tx.emit(RouteFailed(route=home.to_json(), reason=error))
            what = {"delivery_id": intent.id, "kind": intent.kind, "route": intent.route.to_json()}
            tx.emit(DeliveryFailed(**what, error=error) if failed else DeliveryAccepted(**what))
        if route_gone:
            self.failed_routes.add(intent.route.conversation_key)
        self._metrics.deliveries.inc(status=status)
        if failed:
            log.warning("delivery failed", extra={"delivery_id": intent.id, "error": error})
