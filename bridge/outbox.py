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
import json
import logging
from dataclasses import dataclass

from bridge.metrics import Metrics
from bridge.ratelimit import PacedTransports
from bridge.render import render, split
from bridge.transport import Call, DeliveryError, Transport
from bridge.types import DeliveryKind, Route
from runtime.clock import Clock
from runtime.events import Event
from runtime.store import Store, Writer

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 6  # failures in a row on one chunk before the intent is failed
MAX_RETRY_DELAY_S = 60.0


@dataclass(frozen=True, slots=True)
class Intent:
    id: str
    seq: int
    route: Route
    kind: DeliveryKind
    text: str
    status: str
    attempts: int
    chunks_sent: int


class Outbox:
    def __init__(self, store: Store, clock: Clock, metrics: Metrics) -> None:
        self._store = store
        self._clock = clock
        self._metrics = metrics
        self.transports = PacedTransports(clock)  # shared with progress: one pacer a platform
        self._workers: dict[str, asyncio.Task[None]] = {}
        self.failed_routes: set[str] = set()  # conversation keys the platform refused
        self._look_again: set[str] = set()
        self._closing = False

    def attach(self, transport: Transport) -> None:
        self.transports.attach(transport)

    @staticmethod
    def enqueue(w: Writer, intent_id: str, route: Route, kind: DeliveryKind, text: str) -> None:
        """Write an intent inside the caller's transaction; `wake` it after the commit."""
        now = w.now()
        w.execute(
            "INSERT OR IGNORE INTO deliveries (id, conversation_key, route, kind, text, status,"
            " created_at, updated_at) VALUES (?, ?, ?, ?, ?, 'pending', ?, ?)",
            (intent_id, route.conversation_key, json.dumps(route.to_json()), kind, text, now, now),
        )

    async def start(self) -> None:
        """Resume every intent a previous run left pending or sending."""
        failed = await self._store.fetch_all("SELECT conversation_key FROM failed_routes")
        self.failed_routes.update(r["conversation_key"] for r in failed)
        rows = await self._store.fetch_all(
            "SELECT DISTINCT conversation_key FROM deliveries"
            " WHERE status IN ('pending', 'sending')"
        )
        for row in rows:
            self.wake(row["conversation_key"])

    def wake(self, conversation_key: str) -> None:
        if self._closing:
            return
        if conversation_key in self._workers:
            # Its worker may be reading the queue right now, from before this intent's
            # commit: have it look once more before it stops.
            self._look_again.add(conversation_key)
            return
        self._workers[conversation_key] = asyncio.get_running_loop().create_task(
            self._work(conversation_key), name=f"outbox-{conversation_key}"
        )

    async def close(self) -> None:
        self._closing = True
        workers = list(self._workers.values())
        for worker in workers:
            worker.cancel()
        await asyncio.gather(*workers, return_exceptions=True)

    async def route_works_again(self, route: Route) -> None:
        """A message came from a conversation marked failed: the platform takes it again."""
        key = route.home.conversation_key
        if key in self.failed_routes:
            self.failed_routes.discard(key)
            async with self._store.write() as w:
                w.execute("DELETE FROM failed_routes WHERE conversation_key = ?", (key,))

    async def idle(self) -> None:
        """Until no delivery is in progress: for tests and a clean shutdown."""
        while self._workers:
            await asyncio.gather(*self._workers.values(), return_exceptions=True)

    async def _work(self, conversation_key: str) -> None:
        try:
            while True:
                self._look_again.discard(conversation_key)
                intent = await self._next(conversation_key)
                if intent is not None:
                    await self._deliver(intent)
                elif conversation_key not in self._look_again:
                    return
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("delivery worker failed", extra={"conversation": conversation_key})
        finally:
            self._workers.pop(conversation_key, None)

    async def _next(self, conversation_key: str) -> Intent | None:
        rows = await self._store.fetch_all(
            "SELECT * FROM deliveries WHERE conversation_key = ? AND status IN"
            " ('pending', 'sending') ORDER BY seq LIMIT 1",
            (conversation_key,),
        )
        if not rows:
            return None
        r = rows[0]
        return Intent(
            r["id"],
            r["seq"],
            Route.model_validate_json(r["route"]),
            DeliveryKind(r["kind"]),
            r["text"],
            r["status"],
            r["attempts"],
            r["chunks_sent"],
        )

    async def _deliver(self, intent: Intent) -> None:
        transport = self.transports.get(intent.route.platform)
        if transport is None:
            await self._finish(
                intent, "failed", f"no {intent.route.platform} adapter is running to deliver this"
            )
            return
        platform = intent.route.platform
        chunks = split(intent.text, transport.limits.max_chars, lambda s: len(render(s, platform)))
        pacer = self.transports.pacers[platform]
        # Whether the next chunk may already have landed: it was in flight when the last run
        # stopped, or its last attempt had an unknown outcome.
        unsure = intent.status == "sending"
        await self._update(intent, "sending")
        attempts = intent.attempts
        failures = 0  # in a row, on this chunk
        chunk = intent.chunks_sent
        while chunk < len(chunks):
            if unsure:
                unsure = False
                if await transport.delivered(intent.route, intent.id, chunk):
                    chunk, failures = chunk + 1, 0
                    await self._update(intent, "sending", chunks=chunk)
                    continue  # it landed; None (cannot tell) or False: send it (again)
            ticket = await pacer.acquire(intent.route, Call.POST)
            try:
                await transport.send(
                    intent.route,
                    render(chunks[chunk], platform),
                    kind=intent.kind,
                    intent_id=intent.id,
                    chunk=chunk,
                )
            except DeliveryError as exc:
                failure: DeliveryError | None = exc
            else:
                failure = None
            finally:
                ticket.done()
            if failure is not None:
                attempts += 1
                failures += 1
                if not failure.retryable or failures >= MAX_ATTEMPTS:
                    why = str(failure)
                    if failure.landed == "unknown":
                        why += " (it may have arrived)"
                    await self._finish(
                        intent,
                        "failed",
                        f"{why}; {chunk} of {len(chunks)} parts delivered",
                        attempts=attempts,
                        chunks=chunk,
                        route_gone=failure.route_gone,
                    )
                    return
                unsure = failure.landed == "unknown"
                await self._retry_later(intent, failure, attempts, chunk, failures)
                continue
            chunk, failures = chunk + 1, 0
            if chunk < len(chunks):
                await self._update(intent, "sending", attempts=attempts, chunks=chunk)
        await self._finish(intent, "accepted_by_transport", None, attempts=attempts, chunks=chunk)

    async def _retry_later(
        self, intent: Intent, exc: DeliveryError, attempts: int, chunk: int, failures: int
    ) -> None:
        """Record the failure, then wait: for a Retry-After, whatever counted where the send
        counted waits with it (the pacer holds them all back); else this conversation waits,
        longer after each failure in a row."""
        if exc.retry_after is not None:
            delay = exc.retry_after
            self.transports.pacers[intent.route.platform].back_off(intent.route, Call.POST, delay)
        else:
            delay = min(MAX_RETRY_DELAY_S, 2.0 ** (failures - 1))
        await self._update(intent, "sending", attempts=attempts, error=str(exc))
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
        status: str,
        *,
        attempts: int | None = None,
        chunks: int | None = None,
        error: str | None = None,
    ) -> None:
        async with self._store.write() as w:
            w.execute(
                "UPDATE deliveries SET status = ?, attempts = COALESCE(?, attempts),"
                " chunks_sent = COALESCE(?, chunks_sent), last_error = COALESCE(?, last_error),"
                " updated_at = ? WHERE id = ?",
                (status, attempts, chunks, error, w.now(), intent.id),
            )

    async def _finish(
        self,
        intent: Intent,
        status: str,
        error: str | None,
        *,
        attempts: int | None = None,
        chunks: int | None = None,
        route_gone: bool = False,
    ) -> None:
        async with self._store.write() as w:
            w.execute(
                "UPDATE deliveries SET status = ?, attempts = COALESCE(?, attempts),"
                " chunks_sent = COALESCE(?, chunks_sent), last_error = ?, updated_at = ?"
                " WHERE id = ?",
                (status, attempts, chunks, error, w.now(), intent.id),
            )
            if route_gone:
                route = intent.route.home
                w.execute(
                    "INSERT INTO failed_routes (conversation_key, workspace_id, route, reason,"
                    " failed_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (conversation_key) DO UPDATE"
                    " SET reason = excluded.reason, failed_at = excluded.failed_at",
                    (
                        route.conversation_key,
                        route.workspace_id,
                        route.model_dump_json(),
                        error or "",
                        w.now(),
                    ),
                )
                w.emit(Event("route_failed", None, {"route": route.to_json(), "reason": error}))
            w.emit(
                Event(
                    "delivery_" + ("accepted" if status != "failed" else "failed"),
                    None,
                    {
                        "delivery_id": intent.id,
                        "kind": intent.kind,
                        "route": intent.route.to_json(),
                        "error": error,
                    },
                )
            )
        if route_gone:
            self.failed_routes.add(intent.route.conversation_key)
        self._metrics.deliveries.inc(status=status)
        if status == "failed":
            log.warning("delivery failed", extra={"delivery_id": intent.id, "error": error})
