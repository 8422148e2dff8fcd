"""Ingress: dedupe, trust from the config, bad input answered and audited, never a crash."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bridge.service import Bridge
from bridge.store.store import BridgeStore
from bridge.verdicts import MAX_PROMPT_CHARS, Outcome
from tests.bridge.fakes import RecordingTransport
from tests.bridge.harness import close_bridge, config_for, dm, open_bridge
from tests.fakes.anthropic_api import FakeAnthropic


@pytest.fixture
async def setup(
    anthropic_api: FakeAnthropic, db_path: Path
) -> AsyncIterator[tuple[Bridge, RecordingTransport]]:
    transport = RecordingTransport()
    bridge = await open_bridge(config_for(db_path, anthropic_api), transport)
    yield bridge, transport
    await close_bridge(bridge)


async def events(bridge: Bridge, kind: str) -> list[dict[str, object]]:
    return [
        e.data.model_dump() for e in await bridge.runtime.store.events_after(0) if e.type == kind
    ]


async def test_unknown_sender_never_reaches_the_runtime(
    setup: tuple[Bridge, RecordingTransport],
) -> None:
    bridge, transport = setup
    assert await bridge.receive(dm("let me in", user=666, update_id=1)) is Outcome.REFUSED
    assert await bridge.receive(dm("please", user=666, update_id=2)) is Outcome.REFUSED
    await bridge.outbox.idle()
    assert await bridge.runtime.store.messages() == []
    assert [s.text for s in transport.sent] == [
        "You are not an operator of this Switchboard workspace, so I can't pass your message "
        "to the agent. Ask an admin to add you to the workspace's operators."
    ], "one short reply, rate-limited"
    refused = await events(bridge, "inbound_refused")
    assert [r["replied"] for r in refused] == [True, False]
    assert "not an operator" in str(refused[0]["reason"])


async def test_a_group_not_allowed_is_refused_even_for_an_operator(
    setup: tuple[Bridge, RecordingTransport],
) -> None:
    bridge, _ = setup
    assert await bridge.receive(dm("hi", chat="-999")) is Outcome.REFUSED
    assert await bridge.receive(dm("hi", chat="-100", update_id=2)) is Outcome.PROMPT


async def test_duplicates_are_ignored(setup: tuple[Bridge, RecordingTransport]) -> None:
    bridge, _ = setup
    assert await bridge.receive(dm("once", update_id=7)) is Outcome.PROMPT
    assert await bridge.receive(dm("once", update_id=7)) is Outcome.DUPLICATE
    await bridge.settle()
    assert [m.message.text for m in await bridge.runtime.store.messages()] == ["once"]


async def test_non_text_and_empty_messages_get_a_reply(
    setup: tuple[Bridge, RecordingTransport],
) -> None:
    bridge, transport = setup
    assert await bridge.receive(dm(None, update_id=1)) is Outcome.REJECTED
    assert await bridge.receive(dm(" \n ", update_id=2)) is Outcome.REJECTED
    await bridge.outbox.idle()
    assert [s.text for s in transport.sent] == [
        "I can only read text messages; your sticker was not passed to the agent.",
        "Your message was empty, so there was nothing to pass to the agent.",
    ]
    assert [r["reason"] for r in await events(bridge, "inbound_rejected")] == ["non_text", "empty"]
    assert await bridge.runtime.store.messages() == []


async def test_a_message_too_long_is_cut_and_the_sender_told(
    setup: tuple[Bridge, RecordingTransport], anthropic_api: FakeAnthropic
) -> None:
    bridge, transport = setup
    assert await bridge.receive(dm("x" * (MAX_PROMPT_CHARS + 10))) is Outcome.PROMPT
    await bridge.settle()
    [message] = await bridge.runtime.store.messages()
    assert len(message.message.text) == MAX_PROMPT_CHARS
    assert transport.sent[0].text == (
        "Your message was 50,010 characters long; the agent reads at most 50,000, so I passed "
        "the first 50,000 and left out the rest."
    )
    assert transport.sent[1].text == "ok", "and the agent answered the part it got"


async def test_a_retry_racing_its_original_is_taken_once(
    setup: tuple[Bridge, RecordingTransport], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both copies pass the "seen?" check before either commits; the commit decides."""
    bridge, _ = setup

    async def never_seen(self: BridgeStore, keys: list[str]) -> bool:
        return False

    monkeypatch.setattr(BridgeStore, "seen", never_seen)
    first = await bridge.receive(dm("racing", update_id=9))
    second = await bridge.receive(dm("racing", update_id=9))
    assert (first, second) == (Outcome.PROMPT, Outcome.DUPLICATE)
    await bridge.settle()
    assert [m.message.text for m in await bridge.runtime.store.messages()] == ["racing"]
