"""A budget's reservations across processes (issue 38): two replicas' stores on one
PostgreSQL database reserve at once against a budget with room for one call; the check and
the reservation are one statement under the fleet's write lock, so exactly one gets it, and
the room comes back when the call's usage is recorded (or its reservation released)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from bridge.store.schema import MIGRATIONS as BRIDGE_MIGRATIONS
from bridge.store.spend import Ceiling, SpendStore, release, reserve
from config.prices import PriceConfig, PriceTable
from runtime.errors import ConditionFailedError
from runtime.providers.base import Usage
from runtime.spend import CallPurpose, Charge
from runtime.store.store import Store
from runtime.store.usage import UsageFilter, record_call

PRICES = PriceTable.with_overrides({"m": PriceConfig(input=1.0, output=1.0)})
WORKSPACE = UsageFilter(0.0, None, agent_prefix="acme/")
CEILING = Ceiling(WORKSPACE, dollars=True, limit=1.5)  # room for one $1 call
ONE_DOLLAR = Usage(input_tokens=500_000, output_tokens=500_000)


@pytest.fixture
async def replicas(pg_url: str) -> AsyncIterator[tuple[Store, Store]]:
    stores = [
        await Store.open(pg_url, extra_migrations={"bridge": BRIDGE_MIGRATIONS}) for _ in "ab"
    ]
    yield stores[0], stores[1]
    for s in stores:
        await s.close()


def charge(run: str) -> Charge:
    return Charge(f"ses_{run}", "acme/assistant", "alice", f"run_{run}")


async def reserved(store: Store, run: str) -> bool:
    try:
        async with store.write() as w:
            reserve(w, charge(run), 1.0, 1_000_000, [CEILING])
    except ConditionFailedError:
        return False
    return True


async def test_two_replicas_reserving_at_once_get_one_reservation(
    replicas: tuple[Store, Store],
) -> None:
    a, b = replicas
    calls = [(s, f"{name}{n}") for n in range(3) for s, name in ((a, "a"), (b, "b"))]
    got = await asyncio.gather(*(reserved(s, run) for s, run in calls))
    assert sum(got) == 1, "one call's room, one reservation"
    held = await SpendStore(a).reserved(WORKSPACE, True, "none", a.clock.wall())
    assert held == 1.0

    # The call's usage recorded with its reservation released: $1 spent, no more room.
    [winner] = [run for (_, run), ok in zip(calls, got, strict=True) if ok]
    async with a.write() as w:
        record_call(w, PRICES, charge(winner), "m", CallPurpose.ROUND, ONE_DOLLAR)
        release(w, f"run_{winner}")
    assert await SpendStore(b).reserved(WORKSPACE, True, "none", b.clock.wall()) == 0.0
    assert not await reserved(b, "later"), "$1 spent of $1.50: no room for another $1"
