"""The admin console's actions: each does what an operator would see done, is an audit event
naming the admin, and refuses an object of another workspace."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from bridge.admin.errors import NotInWorkspace, NotPossible
from bridge.admin.history import History
from bridge.admin.records import AuditEntry
from bridge.admin.steer import Steering
from bridge.admin.view import AdminView
from bridge.events import AdminActionKind
from bridge.ledger_followers import LedgerFollowers
from bridge.service import Bridge
from bridge.transport import DeliveryError
from bridge.types import DeliveryStatus, TransportLimits
from config.schema import SwitchboardConfig
from runtime.messages import QueueMode
from runtime.records import RunStatus
from runtime.results import SessionState
from tests.bridge.admin_harness import ALICE, BOB, CAROL, dm_in, feed, rows_until, two_workspaces
from tests.bridge.fakes import RecordingTransport
from tests.bridge.harness import close_bridge, open_bridge
from tests.fakes.anthropic_api import FakeAnthropic, text, tools

ADMIN = "acme/lead"


async def audit_of(bridge: Bridge, config: SwitchboardConfig, session_id: str) -> list[AuditEntry]:
    """The session's newest audit events, as its audit page lists them."""
    page = await History(bridge, config).audit("acme", session_id, older=None, newer=None)
    return page.items


async def test_stop_stops_the_running_turn_tells_the_chat_and_is_audited(
    anthropic_api: FakeAnthropic, db_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="bridge.admin.steer")
    config = two_workspaces(db_path, anthropic_api)
    transport = RecordingTransport()
    bridge = await open_bridge(config, transport)
    acme = config.workspaces[0]
    never = asyncio.Event()
    anthropic_api.script = [text("never sent", hold=never)]
    rows = feed(bridge, config, "acme")
    try:
        await bridge.receive(dm_in("acme", ALICE, "long job", 1))
        [row] = await rows_until(rows, lambda r: bool(r) and r[0].state is SessionState.RUNNING)
        flash = await Steering(bridge, config).stop(acme, row.session_id, ADMIN)
        assert flash == f"Stopped the turn {row.run_id} of session {row.session_id}."
        await bridge.settle()
        [run] = await bridge.runtime.store.runs(session_id=row.session_id)
        assert run.status is RunStatus.STOPPED
        assert [s.text for s in transport.sent] == ["Stopped from the admin console by acme/lead."]
        assert transport.sent[0].route.conversation_id == str(ALICE)
        audit = await audit_of(bridge, config, row.session_id)
        assert any(a.summary == "admin acme/lead stopped the turn" for a in audit)
        [action] = await bridge.store.admin_actions("acme")
        assert (action.admin, action.action, action.target) == (
            ADMIN,
            AdminActionKind.STOP_TURN,
            row.run_id,
        )
        with pytest.raises(NotPossible):
            await Steering(bridge, config).stop(acme, row.session_id, ADMIN)  # nothing runs
        [logged] = [vars(r) for r in caplog.records if r.getMessage() == "turn stopped"]
        assert (logged["session_id"], logged["by"]) == (row.session_id, f"admin {ADMIN}")
    finally:
        await rows.aclose()
        await close_bridge(bridge)


async def test_queue_mode_changes_for_the_session_and_is_audited(
    anthropic_api: FakeAnthropic, db_path: Path
) -> None:
    config = two_workspaces(db_path, anthropic_api)
    bridge = await open_bridge(config, RecordingTransport())
    try:
        await bridge.receive(dm_in("acme", ALICE, "hi", 1))
        await bridge.receive(dm_in("beta", CAROL, "hi", 1))
        await bridge.settle()
        view = AdminView(bridge, config)
        [session] = await view.sessions("acme")
        [beta_session] = await view.sessions("beta")
        steering = Steering(bridge, config)
        flash = await steering.set_queue_mode(
            config.workspaces[0], session.session_id, QueueMode.FOLLOWUP, ADMIN
        )
        assert flash == f"Session {session.session_id} now queues in followup mode."
        assert bridge.runtime.status(session.session_id).mode is QueueMode.FOLLOWUP
        audit = await audit_of(bridge, config, session.session_id)
        assert audit[0].summary == "admin acme/lead changed the queue mode: steer \u2192 followup"
        assert audit[1].summary == "queue mode set to followup"
        with pytest.raises(NotInWorkspace):
            await steering.set_queue_mode(
                config.workspaces[0], beta_session.session_id, QueueMode.COLLECT, ADMIN
            )
        assert bridge.runtime.status(beta_session.session_id).mode is QueueMode.STEER
    finally:
        await close_bridge(bridge)


async def test_back_to_the_default_is_the_sessions_own_workspaces_mode(
    anthropic_api: FakeAnthropic, db_path: Path
) -> None:
    config = two_workspaces(db_path, anthropic_api, beta_mode="collect")
    bridge = await open_bridge(config, RecordingTransport())
    try:
        await bridge.receive(dm_in("beta", CAROL, "hi", 1))
        await bridge.settle()
        [session] = await AdminView(bridge, config).sessions("beta")
        assert bridge.runtime.status(session.session_id).mode is QueueMode.COLLECT
        steering = Steering(bridge, config)
        beta = config.workspaces[1]
        await steering.set_queue_mode(beta, session.session_id, QueueMode.STEER, ADMIN)
        await steering.set_queue_mode(beta, session.session_id, None, ADMIN)
        assert bridge.runtime.status(session.session_id).mode is QueueMode.COLLECT, "beta's"
    finally:
        await close_bridge(bridge)


def fail_second_send(attempt: int) -> DeliveryError | None:
    if attempt == 2:
        return DeliveryError("Forbidden: bot was blocked by the user", retryable=False)
    return None


async def test_a_retried_delivery_sends_only_what_had_not_arrived(
    anthropic_api: FakeAnthropic, db_path: Path
) -> None:
    config = two_workspaces(db_path, anthropic_api)
    transport = RecordingTransport(limits=TransportLimits(max_chars=40), fail=fail_second_send)
    bridge = await open_bridge(config, transport)
    anthropic_api.script = [text("First part of the answer.\n\nSecond part of the answer.")]
    try:
        await bridge.receive(dm_in("acme", ALICE, "answer in two parts", 1))
        await bridge.settle()
        [failed] = await AdminView(bridge, config).deliveries("acme")
        assert failed.status is DeliveryStatus.FAILED and failed.chunks_sent == 1
        assert failed.last_error is not None and "blocked" in failed.last_error
        assert await AdminView(bridge, config).deliveries("beta") == []
        steering = Steering(bridge, config)
        with pytest.raises(NotInWorkspace):
            await steering.retry(config.workspaces[1], failed.delivery_id, "beta/lead")
        flash = await steering.retry(config.workspaces[0], failed.delivery_id, ADMIN)
        assert flash == f"Delivery {failed.delivery_id} is queued again."
        await bridge.settle()
        assert [s.text for s in transport.sent] == [
            "First part of the answer.",
            "Second part of the answer.",
        ]
        assert await AdminView(bridge, config).deliveries("acme") == []
        [action] = await bridge.store.admin_actions("acme")
        assert action.action is AdminActionKind.RETRY_DELIVERY and action.session_id is not None
        assert "last error: Forbidden: bot was blocked by the user" in action.detail
        with pytest.raises(NotPossible):
            await steering.retry(config.workspaces[0], failed.delivery_id, ADMIN)  # delivered
    finally:
        await close_bridge(bridge)


async def test_retried_deliveries_go_out_in_their_conversations_order(
    anthropic_api: FakeAnthropic, db_path: Path
) -> None:
    config = two_workspaces(db_path, anthropic_api)
    blocked = True
    transport = RecordingTransport(
        fail=lambda _: DeliveryError("chat not found", retryable=False) if blocked else None
    )
    bridge = await open_bridge(config, transport)
    anthropic_api.script = [text("one"), text("two")]
    try:
        await bridge.receive(dm_in("acme", ALICE, "first", 1))
        await bridge.settle()
        await bridge.receive(dm_in("acme", ALICE, "second", 2))
        await bridge.settle()
        first, second = await AdminView(bridge, config).deliveries("acme")
        blocked = False
        async with bridge.store.write() as tx:  # the later one retried first
            tx.retry_intent(second.delivery_id, second.conversation)
            tx.retry_intent(first.delivery_id, first.conversation)
        await bridge.settle()
        assert [s.text for s in transport.sent] == ["one", "two"]
    finally:
        await close_bridge(bridge)


async def test_a_discarded_delivery_is_gone_and_its_text_stays_in_the_audit(
    anthropic_api: FakeAnthropic, db_path: Path
) -> None:
    config = two_workspaces(db_path, anthropic_api)
    transport = RecordingTransport(
        fail=lambda _: DeliveryError("Forbidden: bot was kicked", retryable=False)
    )
    bridge = await open_bridge(config, transport)
    anthropic_api.script = [text("The report you asked for.")]
    try:
        await bridge.receive(dm_in("acme", ALICE, "report", 1))
        await bridge.settle()
        [failed] = await AdminView(bridge, config).deliveries("acme")
        steering = Steering(bridge, config)
        with pytest.raises(NotInWorkspace):
            await steering.discard(config.workspaces[1], failed.delivery_id, "beta/lead")
        flash = await steering.discard(config.workspaces[0], failed.delivery_id, ADMIN)
        assert flash == f"Delivery {failed.delivery_id} was discarded."
        assert await AdminView(bridge, config).deliveries("acme") == []
        [action] = await bridge.store.admin_actions("acme")
        assert action.action is AdminActionKind.DISCARD_DELIVERY
        assert "'The report you asked for.'" in action.detail and "kicked" in action.detail
        with pytest.raises(NotInWorkspace):
            await steering.discard(config.workspaces[0], failed.delivery_id, ADMIN)
    finally:
        await close_bridge(bridge)


async def test_an_undelivered_notification_rerouted_reaches_the_chosen_operator(
    anthropic_api: FakeAnthropic, db_path: Path
) -> None:
    config = two_workspaces(db_path, anthropic_api)
    alice_blocked = True

    def fail(_: int) -> DeliveryError | None:
        if alice_blocked:
            return DeliveryError("Forbidden: bot was blocked by the user", retryable=False)
        return None

    transport = RecordingTransport(fail=fail)
    bridge = await open_bridge(config, transport)
    anthropic_api.script = [
        tools(("notify_operator", {"message": "Backup failed on db-2"})),
        text("I told the operator."),
    ]
    try:
        await bridge.receive(dm_in("acme", ALICE, "check backups", 1))
        await bridge.settle()
        view = AdminView(bridge, config)
        [undelivered] = await view.undelivered("acme")
        assert undelivered.status == DeliveryStatus.FAILED and "blocked" in (
            undelivered.error or ""
        )
        acme, beta = config.workspaces
        steering = Steering(bridge, config)
        with pytest.raises(NotInWorkspace):
            await steering.reroute(beta, undelivered.notification_id, "carol", "beta/lead")
        with pytest.raises(NotPossible):
            await steering.reroute(acme, undelivered.notification_id, "carol", ADMIN)
        alice_blocked = False
        flash = await steering.reroute(acme, undelivered.notification_id, "bob", ADMIN)
        assert flash == f"Notification {undelivered.notification_id} is on its way to bob."
        await bridge.settle()
        [sent] = [s for s in transport.sent if "Backup failed on db-2" in s.text]
        assert sent.route.conversation_id == str(BOB)
        assert await view.undelivered("acme") == []
        post = await bridge.store.notification_at(sent.route, f"{BOB}:{len(transport.sent)}")
        assert post is not None and post.session_id == undelivered.session_id, "replies reach it"
        audit = await audit_of(bridge, config, undelivered.session_id)
        assert any(
            a.summary.startswith("admin acme/lead sent a notification (to operator bob via")
            for a in audit
        )
        with pytest.raises(NotPossible):
            await steering.reroute(acme, undelivered.notification_id, "alice", ADMIN)
    finally:
        await close_bridge(bridge)


async def test_a_notification_not_routed_yet_is_not_sent_twice(
    anthropic_api: FakeAnthropic, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sent elsewhere while the dispatcher has not reached it, the dispatcher would deliver
    it too: the console waits until its delivery failed or it found no route."""

    async def behind(self: LedgerFollowers, workspace_id: str | None = None) -> None:
        await asyncio.Event().wait()  # it has not routed anything yet

    monkeypatch.setattr(LedgerFollowers, "follow", behind)
    config = two_workspaces(db_path, anthropic_api)
    transport = RecordingTransport()
    bridge = await open_bridge(config, transport)
    anthropic_api.script = [
        tools(("notify_operator", {"message": "Backup failed on db-2"})),
        text("I told the operator."),
    ]
    try:
        await bridge.receive(dm_in("acme", ALICE, "check backups", 1))
        await bridge.runtime.wait_idle()
        [pending] = await AdminView(bridge, config).undelivered("acme")
        assert pending.status == "not routed yet"
        with pytest.raises(NotPossible, match="still being routed"):
            await Steering(bridge, config).reroute(
                config.workspaces[0], pending.notification_id, "bob", ADMIN
            )
        assert not any("Backup failed" in s.text for s in transport.sent)
    finally:
        await close_bridge(bridge)


async def test_a_reroute_pressed_twice_at_once_sends_once(
    anthropic_api: FakeAnthropic, db_path: Path
) -> None:
    """Two presses of Send side by side (issue 38's class: each found the notification
    undelivered before either had written its delivery): one is sent, the other is told."""
    config = two_workspaces(db_path, anthropic_api)
    blocked = True
    transport = RecordingTransport(
        fail=lambda _: (
            DeliveryError("Forbidden: bot was blocked", retryable=False) if blocked else None
        )
    )
    bridge = await open_bridge(config, transport)
    anthropic_api.script = [
        tools(("notify_operator", {"message": "Backup failed on db-2"})),
        text("I told the operator."),
    ]
    try:
        await bridge.receive(dm_in("acme", ALICE, "check backups", 1))
        await bridge.settle()
        [undelivered] = await AdminView(bridge, config).undelivered("acme")
        blocked = False
        acme = config.workspaces[0]
        steering = Steering(bridge, config)
        results = await asyncio.gather(
            *(steering.reroute(acme, undelivered.notification_id, "bob", ADMIN) for _ in "ab"),
            return_exceptions=True,
        )
        assert sorted(type(r).__name__ for r in results) == ["NotPossible", "str"]
        await bridge.settle()
        to_bob = [s for s in transport.sent if s.route.conversation_id == str(BOB)]
        assert len([s for s in to_bob if "Backup failed on db-2" in s.text]) == 1
    finally:
        await close_bridge(bridge)
