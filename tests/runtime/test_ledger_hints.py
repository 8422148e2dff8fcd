"""Replicas hear of each other's commits: at once for an event marked HINT (one payload-free
NOTIFY after its commit), otherwise at their next read, within `BACKSTOP_S`; a commit without
such an event notifies nobody (PostgreSQL takes a database-wide lock to queue a notice)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import ClassVar

import psycopg

from runtime.events import Event, Payload
from runtime.store.postgres import LEDGER_CHANNEL
from runtime.store.publishing import BACKSTOP_S
from runtime.store.store import Store
from tests.runtime.helpers import until


class Noted(Payload):
    TYPE: ClassVar[str] = "test_noted"
    text: str


class Urgent(Payload):
    TYPE: ClassVar[str] = "test_urgent"
    HINT: ClassVar[bool] = True
    text: str


async def notices_during(url: str, work: Awaitable[None]) -> list[str]:
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await conn.execute(f"LISTEN {LEDGER_CHANNEL}")
        await work  # begun once listening
        got: list[str] = []
        try:
            async with asyncio.timeout(0.5):
                async for notice in conn.notifies():
                    got.append(notice.payload)
        except TimeoutError:
            pass
        return got


async def test_only_a_hint_notifies_and_every_commit_reaches_the_other_replica(
    pg_url: str,
) -> None:
    a = await Store.open(pg_url, exclusive=False)
    b = await Store.open(pg_url, exclusive=False)
    try:
        seen: list[str] = []

        async def follow() -> None:
            async for event in b.feed.subscribe(0):
                seen.append(event.type)

        following = asyncio.ensure_future(follow())
        plain = a.emit(Event(Noted(text="n"), "ses_1"))
        assert await notices_during(pg_url, plain) == [], "an ordinary commit notifies nobody"
        hinted = a.emit(Event(Urgent(text="u"), "ses_1"))
        assert await notices_during(pg_url, hinted) == [""], "one notice, payload-free"
        await until(lambda: seen == ["test_noted", "test_urgent"], wait_s=BACKSTOP_S + 3)
        following.cancel()
    finally:
        await a.close()
        await b.close()
