"""Leases and fencing on both engines: two holders on one database (two replicas)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from runtime.clock import ManualClock, SystemClock
from runtime.errors import LeaseLostError
from runtime.holdings import Holdings
from runtime.records import AgentProfile, Lease, SessionRecord
from runtime.store.store import Store


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
        assert await a.leases.holders(["s1"]) == {"s1": "replica-b"}
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
        assert await a.leases.extend("replica-a", ttl_s=10) == 2
        assert await a.leases.holding("replica-a") == {"session:s1", "telegram-poll:acme"}
        await clock.advance(8)  # 16 s after the claim, 8 after the renewal: still held
        assert await b.leases.claim("session:s1", "replica-b", ttl_s=10) is None
        assert one is not None
        await a.leases.release(one)
        taken = await b.leases.claim("session:s1", "replica-b", ttl_s=10)
        assert taken is not None and taken.fence == 2
        assert await a.leases.extend("replica-a", ttl_s=10) == 1
        assert await a.leases.holding("replica-a") == {"telegram-poll:acme"}
    finally:
        await a.close()
        await b.close()


async def test_many_leases_are_claimed_in_one_go_each_only_if_free(db_path: Path | str) -> None:
    clock = ManualClock()
    a, b = await two_stores(db_path, clock)
    try:
        assert await b.leases.claim("session:s3", "replica-b", ttl_s=10) is not None
        names = [f"session:s{n}" for n in range(1, 6)]
        taken = await a.leases.claim_many(names, "replica-a", ttl_s=10)
        assert [x.name for x in taken] == ["session:s1", "session:s2", "session:s4", "session:s5"]
        assert await a.leases.claim_many(names, "replica-a", ttl_s=10) == taken, "kept, same fence"
        await clock.advance(11)
        again = await b.leases.claim_many(["session:s1", "session:s2"], "replica-b", ttl_s=10)
        assert [(x.name, x.fence) for x in again] == [("session:s1", 2), ("session:s2", 2)]
    finally:
        await a.close()
        await b.close()


class AheadClock(SystemClock):
    """A machine whose clock runs a minute ahead of the database's."""

    def wall(self) -> float:
        return super().wall() + 60.0


async def test_a_replica_whose_clock_runs_ahead_takes_no_live_lease_once_aligned(
    db_path: Path | str,
) -> None:
    a = await Store.open(db_path, clock=SystemClock(), exclusive=False)
    b = await Store.open(db_path, clock=AheadClock(), exclusive=False)
    try:
        await a.leases.align()
        assert await a.leases.claim("active", "replica-a", ttl_s=10) is not None
        assert abs(await b.leases.align() + 60.0) < 1.0, "a minute ahead of the database"
        assert await b.leases.claim("active", "replica-b", ttl_s=10) is None
        [held] = await a.leases.all()
        # Each store's alignment is good to half its read's round trip (a second allowed, as
        # for the minute above: on a busy machine a's expiry once read 10.0006 s ahead of b).
        assert held.holder == "replica-a" and 0 < held.expires_at - b.leases.now() <= 10 + 1.0
    finally:
        await a.close()
        await b.close()


async def test_holdings_renew_together_and_tell_at_once_of_one_taken_over(
    db_path: Path | str,
) -> None:
    # The database's clock when the test starts. The holdings read it again at their first
    # claim, and so does b after it: on a loaded machine opening the stores took over a
    # second, which b (not aligned) once counted against a's lease and found it unexpired.
    clock = ManualClock(start=time.time())
    a, b = await two_stores(db_path, clock)
    lost: list[tuple[list[str], str]] = []
    held = Holdings(
        a.leases, "replica-a", 10, lambda gone, why: lost.append(([x.name for x in gone], why))
    )
    try:
        assert [x.name for x in await held.claim(["session:s1"])] == ["session:s1"]
        await b.leases.align()  # as a replica does: lease times are the database's
        await clock.advance(8)
        assert [x.name for x in await held.claim(["session:s1", "session:s2"])] == ["session:s2"]
        await clock.advance(3)  # s1 ran out (a was paused); s2 still has 7 s
        assert await b.leases.claim("session:s1", "replica-b", ttl_s=10) is not None
        await held.renew()
        assert lost == [(["session:s1"], "another replica holds them now")]
        assert list(held.held) == ["session:s2"] and held.lost == 1
        await held.release_all()
        assert await b.leases.claim("session:s2", "replica-b", ttl_s=10) is not None
    finally:
        await a.close()
        await b.close()


async def test_a_database_that_stops_answering_loses_the_leases_in_time(
    db_path: Path | str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every step of a renewal is bounded, the database clock's reading too: a replica whose
    database hangs says its leases are lost before another replica may take them."""
    a = await Store.open(db_path, clock=SystemClock(), exclusive=False)
    lost: list[str] = []
    held = Holdings(a.leases, "replica-a", 2, lambda gone, why: lost.append(why))
    try:
        assert await held.claim(["active"])

        async def hangs() -> float:
            await asyncio.Event().wait()
            return 0.0

        monkeypatch.setattr(a.leases, "align", hangs)
        monkeypatch.setattr("runtime.holdings.ALIGN_S", 0.0)  # due at every renewal
        for _ in range(3):  # each try gives up after a second
            await asyncio.wait_for(held.renew(), 5)
            if lost:
                break
        assert lost and lost[0].startswith("not renewed in time"), lost
        assert held.held == {}
    finally:
        await a.close()


async def test_a_claim_that_fails_halfway_keeps_what_it_took_and_a_lost_lease_is_told(
    db_path: Path | str, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = ManualClock(start=time.time())
    a, b = await two_stores(db_path, clock)
    lost: list[str] = []
    held = Holdings(a.leases, "replica-a", 10, lambda gone, why: lost.extend(x.name for x in gone))
    try:
        assert [x.name for x in await held.claim(["s1"])] == ["s1"]
        await b.leases.align()
        await clock.advance(8)
        monkeypatch.setattr("runtime.holdings.MOST_AT_ONCE", 1)
        claim_many, calls = a.leases.claim_many, [0]

        async def second_fails(names: list[str], holder: str, ttl_s: float) -> list[Lease]:
            calls[0] += 1
            if calls[0] == 2:
                raise ConnectionError("the database went away")
            return await claim_many(names, holder, ttl_s)

        monkeypatch.setattr(a.leases, "claim_many", second_fails)
        with pytest.raises(ConnectionError):
            await held.claim(["s2", "s3"])
        assert sorted(held.held) == ["s1", "s2"], "s2 was taken: it is held, and renewed"
        await clock.advance(3)  # s1 ran out; b takes it
        assert await b.leases.claim("s1", "replica-b", ttl_s=10) is not None
        await held.renew()
        assert lost == ["s1"] and sorted(held.held) == ["s2"]
    finally:
        await a.close()
        await b.close()
