"""What the admin console reads of a workspace: its sessions live, one session's turns and
audit trail, its connections; never another workspace's."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from bridge import texts
from bridge.admin.errors import NotInWorkspace
from bridge.admin.history import History
from bridge.admin.view import AdminView
from runtime.messages import QueueMode
from runtime.results import SessionState
from tests.bridge.admin_harness import ALICE, CAROL, dm_in, feed, rows_until, two_workspaces
from tests.bridge.fakes import RecordingTransport
from tests.bridge.harness import close_bridge, open_bridge
from tests.fakes.anthropic_api import FakeAnthropic, text, tools


async def test_the_live_feed_follows_a_running_turn_and_shows_only_its_workspace(
    anthropic_api: FakeAnthropic, db_path: Path
) -> None:
    config = two_workspaces(db_path, anthropic_api)
    bridge = await open_bridge(config, RecordingTransport())
    hold = asyncio.Event()
    anthropic_api.script = [text("beta's answer"), text("acme's answer", hold=hold)]
    rows = feed(bridge, config, "acme")
    try:
        await bridge.receive(dm_in("beta", CAROL, "hello from beta", 1))
        await bridge.settle()
        assert await anext(rows) == [], "beta's session is not acme's"
        await bridge.receive(dm_in("acme", ALICE, "deploy status?", 2))
        [running] = await rows_until(rows, lambda r: bool(r) and r[0].step is not None)
        assert running.state is SessionState.RUNNING and running.run_id is not None
        assert (running.where, running.who) == ("Telegram, DM with alice", "alice")
        assert running.mode is QueueMode.STEER and running.agent_id == "acme/assistant"
        later = await rows_until(rows, lambda r: (r[0].elapsed_s or 0) > (running.elapsed_s or 0))
        assert later[0].run_id == running.run_id, "ticks bring the elapsed time forward"
        hold.set()
        [idle] = await rows_until(rows, lambda r: r[0].state is SessionState.IDLE)
        assert idle.step is None and idle.run_id is None
        view = AdminView(bridge, config)
        assert [s.agent_id for s in await view.sessions("beta")] == ["beta/assistant"]
    finally:
        await rows.aclose()
        await close_bridge(bridge)


async def test_a_session_shows_its_turns_and_audit_trail_in_words(
    anthropic_api: FakeAnthropic, db_path: Path
) -> None:
    config = two_workspaces(db_path, anthropic_api)
    transport = RecordingTransport()
    bridge = await open_bridge(config, transport)
    tool_round = asyncio.Event()
    anthropic_api.script = [
        tools(("notify_operator", {"message": "Disk at 95% on db-1"}), hold=tool_round),
        text("Cleaned up; disk at 60%."),
    ]
    rows = feed(bridge, config, "acme")
    try:
        await bridge.receive(dm_in("acme", ALICE, "check the disks", 1))
        [row] = await rows_until(rows, lambda r: bool(r) and r[0].state is SessionState.RUNNING)
        await bridge.receive(dm_in("acme", ALICE, "and clean up /tmp", 2))
        tool_round.set()
        await bridge.settle()
        history = History(bridge, config)
        turns = await history.turns("acme", row.session_id, older=None, newer=None)
        [turn] = turns.items
        assert turns.older is None and turns.newer is None, "one page"
        asked = [(m.who, m.role, m.text.text) for m in turn.messages]
        assert asked == [
            ("alice", "operator", "check the disks"),
            ("alice", "operator", "and clean up /tmp"),  # taken into the running turn
        ]
        [call] = [c for step in turn.steps for c in step.calls]
        assert (call.name, call.short_input, call.outcome) == (
            "notify_operator",
            "Disk at 95% on db-1",
            "ok",
        )
        said = [step.said.text.text for step in turn.steps if step.said is not None]
        assert said[-1] == "Cleaned up; disk at 60%." and turn.outcome.startswith("answered in")
        events = await history.audit("acme", row.session_id, older=None, newer=None)
        audit = [a.summary for a in events.items]
        drained = [s for s in audit if "joined the running turn" in s]
        assert len(drained) == 1 and drained[0].startswith("operator alice's message")
        where = (texts.BOUNDARY_WORDS[b] for b in ("before_tool_execution", "after_tool_results"))
        assert drained[0].endswith(tuple(where)) and "msg_" not in drained[0]
        [notified] = [s for s in audit if s.startswith("agent notified the primary operator")]
        assert "via Telegram, chat 1001" in notified and "telegram:acme" not in notified
        assert ", delivered \u2014 Disk at 95% on db-1" in notified
        assert any(s.startswith("turn finished after") for s in audit)
        assert not any(a.type == "progress" for a in events.items), "steps are shown live"
        newest, oldest = events.items[0].seq, events.items[-1].seq
        assert newest is not None and oldest is not None and newest > oldest, "newest first"
    finally:
        await rows.aclose()
        await close_bridge(bridge)


async def test_another_workspaces_session_is_not_found(
    anthropic_api: FakeAnthropic, db_path: Path
) -> None:
    config = two_workspaces(db_path, anthropic_api)
    bridge = await open_bridge(config, RecordingTransport())
    try:
        await bridge.receive(dm_in("beta", CAROL, "hello", 1))
        await bridge.settle()
        [beta_session] = await AdminView(bridge, config).sessions("beta")
        with pytest.raises(NotInWorkspace):
            await AdminView(bridge, config).session("acme", beta_session.session_id)
        with pytest.raises(NotInWorkspace):
            await AdminView(bridge, config).session("acme", "ses_nonexistent")
        history = History(bridge, config)
        with pytest.raises(NotInWorkspace):
            await history.turns("acme", beta_session.session_id, older=None, newer=None)
        with pytest.raises(NotInWorkspace):
            await history.audit("acme", beta_session.session_id, older=None, newer=None)
    finally:
        await close_bridge(bridge)


async def test_connections_show_events_and_errors(
    anthropic_api: FakeAnthropic, db_path: Path
) -> None:
    config = two_workspaces(db_path, anthropic_api)
    bridge = await open_bridge(config, RecordingTransport())
    try:
        bridge.metrics.connection("telegram", "acme", up=True)
        await bridge.receive(dm_in("acme", ALICE, "hi", 1))
        await bridge.settle()
        bridge.metrics.platform_call_failed(
            "telegram", "acme", "GET https://api.example/bot123:acme-test-token/getUpdates: 502"
        )
        acme = config.workspaces[0]
        [connection] = AdminView(bridge, config).connections(acme)
        assert connection.platform == "telegram" and connection.mode == "polling"
        assert connection.up and connection.last_event_at is not None
        # As recorded: the console masks the token in it as it renders every value
        # (tests/admin/test_workspace_pages.py, tests/security/test_secrets_are_masked.py).
        assert connection.last_error and connection.last_error.endswith("/getUpdates: 502")
        assert AdminView(bridge, config).connections(config.workspaces[1]) == []
    finally:
        await close_bridge(bridge)
