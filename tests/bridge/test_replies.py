"""Replies to notifications at the bridge: every chunk of a notification can be answered,
and pruning keeps what a late reply needs."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest

from bridge.service import Bridge
from bridge.types import DeliveryKind, TransportLimits
from tests.bridge.fakes import RecordingTransport
from tests.bridge.harness import close_bridge, config_for, dm, open_bridge
from tests.fakes.anthropic_api import FakeAnthropic, text, tools
from tests.runtime.helpers import until

LONG_NOTICE = "Backups failed\n\n" + "\n\n".join(
    f"volume {i}: checksum mismatch" for i in range(12)
)


@pytest.fixture
async def setup(
    anthropic_api: FakeAnthropic, db_path: Path
) -> AsyncIterator[tuple[Bridge, RecordingTransport]]:
    transport = RecordingTransport(limits=TransportLimits(max_chars=120))
    bridge = await open_bridge(config_for(db_path, anthropic_api), transport)
    yield bridge, transport
    await close_bridge(bridge)


async def notified(
    bridge: Bridge, transport: RecordingTransport, anthropic: FakeAnthropic
) -> list[str]:
    """The ids of the notification's chunks, as the transport answered them."""
    anthropic.script = [tools(("notify_operator", {"message": LONG_NOTICE})), text("asked")]
    await bridge.receive(dm("check backups", update_id=1))
    await bridge.settle()
    chunks = [
        f"{s.route.conversation_id}:{n}"
        for n, s in enumerate(transport.sent, 1)
        if s.kind is DeliveryKind.NOTIFICATION
    ]
    assert len(chunks) > 2, "the notification went out in several parts"
    return chunks


async def test_a_reply_to_any_part_of_a_long_notification_reaches_its_agent(
    setup: tuple[Bridge, RecordingTransport], anthropic_api: FakeAnthropic
) -> None:
    bridge, transport = setup
    chunks = await notified(bridge, transport, anthropic_api)
    [record] = await bridge.runtime.store.notifications()
    anthropic_api.script = [text("restoring")]
    await bridge.receive(replace(dm("restore them", update_id=2), replied_to=chunks[-1]))
    await until(lambda: len(anthropic_api.requests) == 3)
    prompt = anthropic_api.requests[-1]["messages"][-1]["content"][-1]["text"]
    assert prompt.startswith(f"[The operator answers your notification {record.notification_id}")


async def test_pruning_forgets_answers_posted_but_not_notifications(
    setup: tuple[Bridge, RecordingTransport], anthropic_api: FakeAnthropic
) -> None:
    bridge, transport = setup
    chunks = await notified(bridge, transport, anthropic_api)
    pruned = await bridge.store.prune_posts(before=bridge.runtime.clock.wall() + 1)
    assert pruned == 1, "the turn's answer; the notification's parts stay"
    anthropic_api.script = [text("restoring")]
    await bridge.receive(replace(dm("restore them", update_id=2), replied_to=chunks[0]))
    await until(lambda: len(anthropic_api.requests) == 3)
    prompt = anthropic_api.requests[-1]["messages"][-1]["content"][-1]["text"]
    assert prompt.startswith("[The operator answers your notification ")
