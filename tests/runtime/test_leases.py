"""Leases and fencing on both engines: two holders on one database (two replicas)."""

from __future__ import annotations

from pathlib import Path

import pytest

from runtime.clock import ManualClock
from runtime.errors import LeaseLostError
from runtime.records import AgentProfile, SessionRecord
from runtime.store import Store


async def two_stores(db_path: Path | str, clock: ManualClock) -> tuple[Store, Store]:
    first = await Store.open(db_path, clock=clock, exclusive=False)
    second = await Store.open(db_path, clock=clock, exclusive=False)
    return first, second


async def test_a_lease_has_one_holder_until_it_expires_then_changes_hands_with_a_new_fence(
    db_path: Path | str,
) -> None:
    clock = ManualClock()
    a, b = await two_stores(db_path, clock)
    try:
        held = await a.leases.claim("session:s1", "replica-a", ttl_s=10)
        assert held is not None and held.fence == 1
        assert await b.leases.claim("session:s1", "replica-b", ttl_s=10) is None
        again = await a.leases.claim("session:s1", "replica-a", ttl_s=10)
        assert again is not None and again.fence == 1, "keeping a lease keeps its fence"
        await clock.advance(11)
        taken = await b.leases.claim("session:s1", "replica-b", ttl_s=10)
        assert taken is not None and taken.holder == "replica-b" and taken.fence == 2
        assert [lease.holder for lease in await a.leases.all()] == ["replica-b"]
    finally:
        await a.close()
        await b.close()


async def test_a_write_fenced_by_a_lost_lease_is_refused_and_leaves_nothing(
    db_path: Path | str,
) -> None:
    clock = ManualClock()
    a, b = await two_stores(db_path, clock)
    try:
        old = await a.leases.claim("session:s1", "replica-a", ttl_s=10)
        assert old is not None
        await clock.advance(11)  # replica A paused past its lease; B takes over
        assert await b.leases.claim("session:s1", "replica-b", ttl_s=10) is not None
        record = SessionRecord("s1", "assistant", AgentProfile.DEFAULT, clock.wall())
        with pytest.raises(LeaseLostError):
            async with a.write() as w:
                w.fenced(old)
                w.insert_session(record)
        assert await b.sessions() == [], "the stale holder's write did not land"
        current = await b.leases.claim("session:s1", "replica-b", ttl_s=10)
        assert current is not None
        async with b.write() as w:
            w.fenced(current)
            w.insert_session(record)
        assert [s.id for s in await a.sessions()] == ["s1"]
    finally:
        await a.close()
        await b.close()


async def test_renewing_keeps_what_is_held_and_a_released_lease_is_free_at_once(
    db_path: Path | str,
) -> None:
    clock = ManualClock()
    a, b = await two_stores(db_path, clock)
    try:
        one = await a.leases.claim("session:s1", "replica-a", ttl_s=10)
        await a.leases.claim("telegram-poll:acme", "replica-a", ttl_s=10)
        await clock.advance(8)
        assert [x.name for x in await a.leases.renew("replica-a", ttl_s=10)] == [
            "session:s1",
            "telegram-poll:acme",
        ]
        await clock.advance(8)  # 16 s after the claim, 8 after the renewal: still held
        assert await b.leases.claim("session:s1", "replica-b", ttl_s=10) is None
        assert one is not None
        await a.leases.release(one)
        taken = await b.leases.claim("session:s1", "replica-b", ttl_s=10)
        assert taken is not None and taken.fence == 2
        assert [x.name for x in await a.leases.renew("replica-a", ttl_s=10)] == [
            "telegram-poll:acme"
        ]
    finally:
        await a.close()
        await b.close()
