"""The App as a list of parts (`App._parts_in_order`): a reload walks that list, so a part
added to it is reconfigured with nothing else to change; the stop closes each part once, in
the order the process needs (nothing more taken first, held files before the bots stop, what
the bots stored while stopping kept, the store last)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from adapters.server.app import App
from bridge.attachments import downloads
from bridge.parts import Change, Part
from config.schema import SwitchboardConfig
from tests.adapters.reload.harness import CAROL, edit
from tests.adapters.telegram_harness import start_app
from tests.fakes.anthropic_api import FakeAnthropic
from tests.fakes.telegram_api import FakeTelegram

AGENTS = "[[workspaces.agents]]"  # acme's first: an operator added before it changes acme


async def test_a_part_added_to_the_list_is_reconfigured_by_a_reload(
    db_path: Path,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[tuple[Change, SwitchboardConfig]] = []
    listed = App._parts_in_order

    def with_one_more(app: App) -> Iterator[Part]:
        yield from listed(app)
        yield Part("watcher", reconfigure=lambda change: seen.append((change, app.config)))

    monkeypatch.setattr(App, "_parts_in_order", with_one_more)
    app = await start_app(db_path, anthropic_api, telegram_api)
    try:
        edit(app, AGENTS, CAROL + AGENTS)
        report = await app.reload()
        assert report.ok and report.changed == ("acme",), report
        [(change, running)] = seen
        operators = [
            [o.id for o in c.workspaces[0].operators] for c in (change.before, change.after)
        ]
        assert operators == [["alice"], ["alice", "carol"]]
        assert running is change.after, "the parts before it had the new config already"
    finally:
        await app.stop()


async def test_each_part_stops_once_in_the_order_the_process_needs(
    db_path: Path,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    cancelled: list[tuple[asyncio.Task[None], ...]] = []
    cancel_and_wait = downloads.cancel_and_wait

    async def counted(*tasks: asyncio.Task[None] | None) -> None:
        cancelled.append(tuple(t for t in tasks if t is not None))
        await cancel_and_wait(*tasks)

    monkeypatch.setattr(downloads, "cancel_and_wait", counted)
    caplog.set_level(logging.DEBUG, logger="bridge.parts")
    app = await start_app(db_path, anthropic_api, telegram_api)
    await app.stop()
    assert len(cancelled) == 1, "the downloads were closed once"

    stopped = [r.__dict__["part"] for r in caplog.records if r.getMessage() == "part stopped"]
    assert len(stopped) == len(set(stopped)), stopped

    def before(first: str, then: str) -> bool:
        return stopped.index(first) < stopped.index(then)

    assert stopped[:2] == ["role", "doors"], "nothing more is taken, first"
    assert before("downloads", "platforms"), "messages held for their files stay held"
    assert before("replay", "platforms"), "nothing more is handed to the bots"
    assert before("platforms", "intake"), "what the bots stored while stopping is kept"
    assert before("outbox", "lease") and before("schedules", "lease"), "the work stops first"
    assert stopped[-1] == "runtime", "every part uses the store"
