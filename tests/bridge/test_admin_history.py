"""A session's audit trail, a page at a time: the pages follow each other without a gap or an
event twice, the same link gives the same page however many events came since, and a link
with nothing beyond it gives the newest page."""

from __future__ import annotations

from pathlib import Path

import pytest

from bridge.admin import history
from bridge.admin.history import History
from tests.bridge.admin_harness import ALICE, dm_in, two_workspaces
from tests.bridge.fakes import RecordingTransport
from tests.bridge.harness import close_bridge, open_bridge
from tests.fakes.anthropic_api import FakeAnthropic, text

PER_PAGE = 4


async def test_the_audit_trail_pages_hold_still_and_meet_without_a_gap(
    anthropic_api: FakeAnthropic, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(history, "EVENTS_PER_PAGE", PER_PAGE)
    config = two_workspaces(db_path, anthropic_api)
    bridge = await open_bridge(config, RecordingTransport())
    anthropic_api.responder = lambda body: text("noted")
    try:
        for n in range(1, 4):
            await bridge.receive(dm_in("acme", ALICE, f"note {n}", n))
            await bridge.settle()
        [session] = bridge.runtime.sessions
        trail = History(bridge, config)

        async def page(older: int | None = None, newer: int | None = None) -> list[int | None]:
            found = await trail.audit("acme", session, older=older, newer=newer)
            return [e.seq for e in found.items]

        newest = await trail.audit("acme", session, older=None, newer=None)
        assert len(newest.items) == PER_PAGE and newest.newer is None
        seen, cursor = [e.seq for e in newest.items], newest.older
        while cursor is not None:
            found = await trail.audit("acme", session, older=int(cursor), newer=None)
            assert found.newer is not None, "an older page links back"
            seen += [e.seq for e in found.items]
            cursor = found.older
        every = [e.seq for e in await bridge.runtime.store.history.events(session, limit=99)]
        assert len(every) > 2 * PER_PAGE and seen == every, "the pages meet, no event twice"

        assert newest.older is not None
        second = await page(older=int(newest.older))
        await bridge.receive(dm_in("acme", ALICE, "note 4", 4))
        await bridge.settle()
        assert await page(older=int(newest.older)) == second, "the same link, the same page"
        latest = await page()
        assert latest[0] is not None and every[0] is not None and latest[0] > every[0]
        assert await page(newer=latest[1]) == latest, "nothing newer: the newest page"
        assert await page(older=1) == latest, "nothing older: the newest page"
    finally:
        await close_bridge(bridge)
