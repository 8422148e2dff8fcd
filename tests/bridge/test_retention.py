"""Retention (issue 11): pruning drops what is old and keeps what is young or still needed,
in batches that let live writes through, on the runtime's clock."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from adapters.server.assembly import open_runtime
from adapters.telegram.platform import TELEGRAM
from bridge.dispatch_cursor import ONE_PROCESS as CURSOR
from bridge.events import InboundRejected
from bridge.retention import DAY_S, Retention
from bridge.service import Bridge
from bridge.store.schema import MIGRATIONS
from bridge.store.store import BridgeStore
from bridge.types import DeliveryKind, DeliveryStatus, Route
from bridge.verdicts import Outcome
from config.schema import RetentionConfig
from runtime.clock import ManualClock
from runtime.events import Event
from runtime.store import sqlite_db
from runtime.store.database import Engine
from runtime.store.store import Store
from tests.bridge.fakes import RecordingTransport
from tests.bridge.harness import close_bridge, config_for, dm
from tests.fakes.anthropic_api import FakeAnthropic

ROUTE = Route(platform=TELEGRAM.name, workspace_id="acme", conversation_id="1001")
KEEP_A_WEEK = RetentionConfig(events_days=7, delivered_days=7, dedupe_days=7)
Stores = tuple[Store, BridgeStore, ManualClock]


@pytest.fixture
async def stores(db_path: Path, cleanup: list[Any]) -> Stores:
    clock = ManualClock()
    store = await Store.open(db_path, clock=clock, extra_migrations={"bridge": MIGRATIONS})
    cleanup.append(store)
    return store, BridgeStore(store), clock


def rejected(reason: str) -> InboundRejected:
    return InboundRejected(
        platform=TELEGRAM.name, workspace_id="acme", sender_id="1", reason=reason
    )


async def history(bridge: BridgeStore, tag: str, events: int = 3) -> None:
    """A bit of everything the store keeps, all written now and tagged: a ledger event per
    `events`, a platform id seen, a refusal reply, and deliveries in each state."""
    async with bridge.write() as tx:
        for n in range(events):
            tx.emit(rejected(f"{tag}-{n}"))
        tx.mark_seen([f"{tag}-update"], None)
        tx.refusal_replied(f"{tag}-stranger")
        for status, kind in [
            (DeliveryStatus.ACCEPTED_BY_TRANSPORT, DeliveryKind.TURN_RESULT),
            (DeliveryStatus.FAILED, DeliveryKind.TURN_RESULT),
            (DeliveryStatus.FAILED, DeliveryKind.NOTIFICATION),
            (DeliveryStatus.PENDING, DeliveryKind.TURN_RESULT),
        ]:
            intent_id = f"{tag}-{status}-{kind}"
            tx.enqueue(intent_id, ROUTE, kind, "text")
            if status is not DeliveryStatus.PENDING:
                tx.finish_intent(intent_id, status, None)


async def event_reasons(store: Store) -> list[str]:
    return [
        e.data.reason for e in await store.events_after(0) if isinstance(e.data, InboundRejected)
    ]


async def test_pruning_removes_what_is_old_and_keeps_what_is_young(stores: Stores) -> None:
    store, bridge, clock = stores
    await history(bridge, "old")
    await clock.advance(10 * DAY_S)
    await history(bridge, "young")
    async with bridge.write() as tx:
        tx.advance_cursor(CURSOR, store.last_seq)  # the dispatcher has handled everything

    pruned = await Retention(KEEP_A_WEEK, store, bridge).prune()

    assert (pruned.events, pruned.deliveries, pruned.inbound_seen) == (3, 2, 1)
    assert await event_reasons(store) == ["young-0", "young-1", "young-2"]
    assert not await bridge.seen(["old-update"]) and await bridge.seen(["young-update"])
    young = {i.id for i in await bridge.intents() if i.id.startswith("young")}
    old = {i.id for i in await bridge.intents() if i.id.startswith("old")}
    assert len(young) == 4
    assert old == {
        "old-failed-notification",  # /status lists it as undelivered, with its error
        "old-pending-turn_result",  # not sent yet
    }
    assert pruned.refusals == 1, "a reply older than the reply interval changes nothing"
    assert await bridge.refusal_replied_at("young-stranger") is not None


async def test_zero_keeps_a_kind_forever(stores: Stores) -> None:
    store, bridge, clock = stores
    await history(bridge, "old")
    async with bridge.write() as tx:
        tx.advance_cursor(CURSOR, store.last_seq)
    await clock.advance(1000 * DAY_S)
    forever = RetentionConfig(events_days=0, delivered_days=0, dedupe_days=0)
    pruned = await Retention(forever, store, bridge).prune()
    assert (pruned.events, pruned.deliveries, pruned.inbound_seen) == (0, 0, 0)
    assert len(await event_reasons(store)) == 3 and await bridge.seen(["old-update"])


async def test_events_the_dispatcher_has_not_handled_stay_however_old(stores: Stores) -> None:
    store, bridge, clock = stores
    await history(bridge, "old", events=10)
    async with bridge.write() as tx:
        tx.advance_cursor(CURSOR, 4)
    await clock.advance(100 * DAY_S)

    pruned = await Retention(KEEP_A_WEEK, store, bridge).prune()

    assert pruned.events == 4
    assert await event_reasons(store) == [f"old-{n}" for n in range(4, 10)]
    assert [e.seq for e in await store.events_after(4)] == list(range(5, 11))


async def test_the_newest_event_stays_so_the_ledger_numbers_on(db_path: Path) -> None:
    """Were the ledger emptied, the next open would number from 1 again, under the
    dispatcher's cursor, and the dispatcher would skip every new event."""
    clock = ManualClock()
    store = await Store.open(db_path, clock=clock, extra_migrations={"bridge": MIGRATIONS})
    bridge = BridgeStore(store)
    await history(bridge, "old", events=5)
    async with bridge.write() as tx:
        tx.advance_cursor(CURSOR, store.last_seq)
    await clock.advance(100 * DAY_S)
    assert (await Retention(KEEP_A_WEEK, store, bridge).prune()).events == 4
    assert [e.seq for e in await store.events_after(0)] == [5]
    await store.close()
    store = await Store.open(db_path, clock=clock, extra_migrations={"bridge": MIGRATIONS})
    try:
        await store.emit(Event(rejected("new")))
        assert [e.seq for e in await store.events_after(0)] == [5, 6]
    finally:
        await store.close()


async def test_a_write_waits_for_one_batch_at_most(
    stores: Stores, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, bridge, clock = stores
    if store.engine is not Engine.SQLITE:
        pytest.skip("about SQLite's one writer thread (PostgreSQL deletes on its own connection)")
    async with bridge.write() as tx:
        for n in range(3000):
            tx.emit(rejected(f"old-{n}"))
    await clock.advance(100 * DAY_S)
    steps: list[str] = []  # appended on the store's thread as each statement starts

    def logged(name: str, original: Callable[..., Any]) -> Callable[..., Any]:
        def run(*args: Any) -> Any:
            steps.append(name)
            return original(*args)

        return run

    monkeypatch.setattr(sqlite_db, "alone", logged("batch", sqlite_db.alone))
    monkeypatch.setattr(sqlite_db, "commit", logged("write", sqlite_db.commit))
    pruning = asyncio.create_task(store.prune_events(clock.wall(), store.last_seq, batch=50))
    while steps.count("batch") < 5:  # noqa: ASYNC110 - it counts the store thread's steps
        await asyncio.sleep(0.001)
    asked = len(steps)
    await store.emit(Event(rejected("young")))  # waits for the batch under way, if any
    answered = steps.index("write", asked)
    assert steps[asked:answered].count("batch") <= 1, steps[asked : answered + 1]
    removed = await pruning
    assert "batch" in steps[answered:], "the write went in while pruning went on"
    assert removed == 2999 and await event_reasons(store) == ["old-2999", "young"]


@pytest.mark.parametrize("retry_after_s", [3600.0, DAY_S], ids=["slack-1h", "telegram-24h"])
async def test_a_platform_retry_in_its_window_is_still_dropped_after_a_prune(
    anthropic_api: FakeAnthropic, db_path: Path, retry_after_s: float
) -> None:
    clock = ManualClock()
    config = config_for(db_path, anthropic_api)
    config = config.model_copy(update={"retention": RetentionConfig(dedupe_days=1)})
    runtime = await open_runtime(config, clock=clock)
    bridge = Bridge(config, runtime, progress_interval_s=60)
    bridge.attach(RecordingTransport())
    await bridge.start()
    try:
        sticker = dm(None, update_id=7)  # answered by the bridge alone: no turn
        assert await bridge.receive(sticker) is Outcome.REJECTED
        await clock.advance(retry_after_s)
        await bridge.retention.prune()
        assert await bridge.receive(sticker) is Outcome.DUPLICATE
        await clock.advance(DAY_S)
        await bridge.retention.prune()
        assert not await bridge.store.seen([f"{TELEGRAM.name}:acme:update:7"])
    finally:
        await close_bridge(bridge)


async def test_the_background_task_prunes_on_the_clock_logs_and_survives_an_error(
    stores: Stores, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    store, bridge, clock = stores
    await history(bridge, "old")
    config = RetentionConfig(dedupe_days=1, interval_s=600)
    retention = Retention(config, store, bridge)
    failing = bridge.prune_seen

    async def broken(before: float, batch: int = 1) -> int:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(bridge, "prune_seen", broken)
    caplog.set_level(logging.INFO, logger="bridge.retention")
    async with retention.running():
        await asyncio.sleep(0)  # it waits on the clock from now on
        await clock.advance(2 * DAY_S)
        await logged(caplog, "store pruning failed; trying again next round")
        monkeypatch.setattr(bridge, "prune_seen", failing)
        await clock.advance(600)
        done = await logged(caplog, "store pruned")
    assert done.__dict__["inbound_seen"] == 1 and done.__dict__["refusals"] == 1
    assert {"events", "deliveries", "elapsed_s"} <= done.__dict__.keys()


async def logged(caplog: pytest.LogCaptureFixture, message: str) -> logging.LogRecord:
    """The first log record saying `message`, once it has been written."""
    for _ in range(500):
        found = [r for r in caplog.records if r.getMessage() == message]
        if found:
            return found[0]
        await asyncio.sleep(0.01)
    raise AssertionError(f"nothing logged {message!r}: {caplog.text}")


async def test_retention_off_starts_no_task(stores: Stores) -> None:
    store, bridge, clock = stores
    retention = Retention(RetentionConfig(interval_s=0), store, bridge)
    async with retention.running():
        await history(bridge, "old")
        await clock.advance(1000 * DAY_S)
    assert await bridge.seen(["old-update"])
