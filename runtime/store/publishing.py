"""The store's feed in ledger order: this process's commits and, where replicas share the
database, every other replica's (read after the database's notification, or its own next
commit, or within `BACKSTOP_S`), each event once and in number order, another replica's
earlier events before this process's later ones."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable

from runtime.events import Event, EventFeed
from runtime.tasks import cancel_and_wait

log = logging.getLogger(__name__)

BACKSTOP_S = 2.0  # another replica's commits reach the feed at least this often


class Publisher:
    def __init__(
        self, feed: EventFeed, events_after: Callable[[int], Awaitable[list[Event]]]
    ) -> None:
        self.feed = feed
        self._events_after = events_after
        self.published = 0  # the newest ledger event the feed has carried
        # The first number of each of this process's transactions committing and not yet
        # published: a carry stops before them, so they reach the feed whole, as committed.
        self.own: set[int] = set()
        # This process's transactions committing whose events the database numbers (PostgreSQL)
        # and has not said the numbers of yet: the follower carries nothing while there are
        # any (one of them may be among what it reads), and goes on once there are none.
        self.unnumbered = 0
        self._put_off = False  # the follower put a carry off for them
        self._woken = asyncio.Event()
        self._lock = asyncio.Lock()
        self._follower: asyncio.Task[None] | None = None

    def follow(self, notices: AsyncIterator[str]) -> None:
        """Carry other replicas' commits onto the feed as their notices come."""
        self._follower = asyncio.get_running_loop().create_task(
            self._follow(notices), name="store-ledger-follower"
        )

    async def close(self) -> None:
        await cancel_and_wait(self._follower)

    def numbering(self) -> None:
        """One of this process's transactions with ledger events is committing, its events
        to be numbered by the database."""
        self.unnumbered += 1

    def numbered(self, first: int | None) -> None:
        """Its commit is over: its events are numbered from `first` (None: it failed)."""
        self.unnumbered -= 1
        if first is not None:
            self.own.add(first)
        if not self.unnumbered and self._put_off:
            self._put_off = False
            self._woken.set()

    def at_once(self, events: list[Event]) -> bool:
        """Whether `publish(events)` runs to its end without waiting: no other publishing
        under way, and no event before these that the feed has not carried."""
        if self._lock.locked():
            return False
        for event in events:
            if event.seq is not None:
                return event.seq <= self.published + 1
        return True

    async def publish(self, events: list[Event]) -> None:
        """This process's committed events to the feed, after any other replica's before
        them that the feed has not carried yet."""
        async with self._lock:
            numbered = [e.seq for e in events if e.seq is not None]
            if numbered and numbered[0] > self.published + 1:
                await self._carry(until=numbered[0] - 1)
            # The database's notice of this commit may have carried them already.
            self.feed.publish([e for e in events if e.seq is None or e.seq > self.published])
            if numbered:
                self.published = max(self.published, numbered[-1])

    async def _follow(self, notices: AsyncIterator[str]) -> None:
        """Carry what other replicas committed: at once on a notice (only the commits they
        must hear of at once notify), and at least every `BACKSTOP_S` (nothing depends on a
        notice arriving)."""
        woken = self._woken

        async def listen() -> None:
            async for _ in notices:
                woken.set()

        listener: asyncio.Task[None] | None = asyncio.get_running_loop().create_task(
            listen(), name="ledger-notices"
        )
        try:
            while True:
                # asyncio.timeout, not wait_for: on Python 3.11 wait_for can swallow a
                # cancellation that comes as the wait ends, and the stop would wait forever.
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(BACKSTOP_S):
                        await woken.wait()
                woken.clear()
                if listener is not None and listener.done():  # the backstop goes on alone
                    if not listener.cancelled() and (error := listener.exception()):
                        log.error("ledger notices ended; reading every few seconds", exc_info=error)
                    listener = None
                try:
                    async with self._lock:
                        await self._carry(following=True)
                except Exception:  # a failed read is retried at the next wake
                    log.exception("could not read the ledger after a notification")
        finally:
            await cancel_and_wait(listener)

    async def _carry(self, until: int | None = None, *, following: bool = False) -> None:
        """Other replicas' events after the newest published, up to `until`; `following`:
        up to this process's own still committing (told only once the read is back: one of
        them may have committed meanwhile)."""
        found = await self._events_after(self.published)
        if following:
            if self.unnumbered:
                self._put_off = True
                return
            until = min(self.own) - 1 if self.own else None
        for event in found:
            if until is not None and event.seq is not None and event.seq > until:
                break
            self.feed.publish([event])
            self.published = event.seq or self.published
