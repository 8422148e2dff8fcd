"""Where output goes, step by step (DESIGN §3, Routes), down to "nowhere"."""

from __future__ import annotations

from pathlib import Path

from adapters.telegram.platform import TELEGRAM
from bridge.sessions import agent_key
from bridge.status import Status, undelivered_notifications
from bridge.types import Route
from runtime.messages import InboundMessage, MessageKind, Origin, Priority, Trust
from tests.bridge.fakes import RecordingTransport
from tests.bridge.harness import close_bridge, config_for, dm, open_bridge
from tests.fakes.anthropic_api import FakeAnthropic, text, tools


def system_message(t: str) -> InboundMessage:
    return InboundMessage(
        t,
        kind=MessageKind.TIMER_TICK,
        origin=Origin.TIMER,
        trust=Trust.TRUSTED_SYSTEM,
        priority=Priority.NORMAL,
    )


async def test_reply_goes_to_the_triggering_message(
    anthropic_api: FakeAnthropic, db_path: Path
) -> None:
    transport = RecordingTransport()
    bridge = await open_bridge(config_for(db_path, anthropic_api), transport)
    try:
        await bridge.receive(dm("hi", chat="-100", update_id=5))
        await bridge.settle()
        [sent] = transport.sent
        assert sent.route == Route(
            platform=TELEGRAM.name, workspace_id="acme", conversation_id="-100", reply_to="5"
        )
    finally:
        await close_bridge(bridge)


async def test_a_turn_no_chat_message_started_goes_to_the_sessions_conversation(
    anthropic_api: FakeAnthropic, db_path: Path
) -> None:
    transport = RecordingTransport()
    bridge = await open_bridge(config_for(db_path, anthropic_api), transport)
    anthropic_api.script = [text("first"), text("timer says hi")]
    try:
        await bridge.receive(dm("hi", chat="-100", update_id=5))
        await bridge.settle()
        session_id = bridge.sessions.session_of(transport.sent[0].route)
        assert session_id is not None
        await bridge.runtime.submit(session_id, system_message("tick"))
        await bridge.settle()
        assert transport.sent[1].text == "timer says hi"
        assert transport.sent[1].route == Route(
            platform=TELEGRAM.name, workspace_id="acme", conversation_id="-100"
        )
    finally:
        await close_bridge(bridge)


async def test_without_a_conversation_output_goes_to_the_primary_operator(
    anthropic_api: FakeAnthropic, db_path: Path
) -> None:
    transport = RecordingTransport()
    bridge = await open_bridge(config_for(db_path, anthropic_api), transport)
    anthropic_api.script = [text("report for the operator")]
    try:
        sid = await bridge.runtime.create_session(agent_key("acme", "assistant"))
        await bridge.runtime.submit(sid, system_message("nightly check"))
        await bridge.settle()
        [sent] = transport.sent
        assert sent.route.conversation_id == "1001", "alice's Telegram DM"
    finally:
        await close_bridge(bridge)


async def test_nowhere_keeps_the_notification_and_status_lists_it(
    anthropic_api: FakeAnthropic, db_path: Path
) -> None:
    config = config_for(db_path, anthropic_api)
    bridge = await open_bridge(config)  # no Telegram adapter running: no route is usable
    anthropic_api.script = [
        tools(("notify_operator", {"message": "Disk at 95%\ndetails"})),
        text("done"),
    ]
    try:
        sid = await bridge.runtime.create_session(agent_key("acme", "assistant"))
        await bridge.runtime.submit(sid, system_message("check disk"))
        await bridge.settle()
        [record] = await bridge.runtime.store.notifications()
        [undelivered] = await undelivered_notifications(bridge.runtime.store, bridge.store, "acme")
        assert undelivered.notification_id == record.notification_id
        assert undelivered.status == "unroutable"
        report = await Status(bridge.runtime, bridge.store).text(sid, config.workspaces[0])
        assert "Undelivered notifications: 1" in report and "- Disk at 95%" in report
        events = [e.type for e in await bridge.runtime.store.events_after(0)]
        assert "notification_unroutable" in events and "output_unroutable" in events
    finally:
        await close_bridge(bridge)


async def test_a_route_is_resolved_from_the_first_message_the_caller_has_read(
    anthropic_api: FakeAnthropic, db_path: Path
) -> None:
    """A turn's result resolves its route with the run's first message dispatch read for it,
    not read again (issue 45: a store read a turn); one of another run is read again."""
    transport = RecordingTransport()
    bridge = await open_bridge(config_for(db_path, anthropic_api), transport)
    anthropic_api.script = [text("first"), text("second")]
    try:
        await bridge.receive(dm("hi", chat="-100", update_id=5))
        await bridge.settle()
        await bridge.receive(dm("again", chat="-100", update_id=6))
        await bridge.settle()
        session_id = bridge.sessions.session_of(transport.sent[0].route)
        assert session_id is not None
        store = bridge.runtime.store
        one, two = await store.runs(session_id=session_id)
        first = await store.first_message_of_run(one.id)
        reads: list[str] = []
        read = store.first_message_of_run

        async def counted(run_id: str) -> object:
            reads.append(run_id)
            return await read(run_id)

        store.first_message_of_run = counted  # type: ignore[method-assign]
        route = await bridge.router.resolve(session_id, one.id, first)
        assert route == transport.sent[0].route and reads == []
        route = await bridge.router.resolve(session_id, two.id, first)
        assert route == transport.sent[1].route and reads == [two.id]
    finally:
        await close_bridge(bridge)
