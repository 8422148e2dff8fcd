"""Two arrivals of a new conversation side by side find one session (issue 38's class: a
check, then a create across an await, then the map updated)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from bridge.store.transaction import BridgeTx
from tests.bridge.fakes import RecordingTransport
from tests.bridge.harness import close_bridge, config_for, dm, open_bridge
from tests.fakes.anthropic_api import FakeAnthropic


async def test_two_first_messages_of_a_conversation_share_one_session(
    db_path: Path, anthropic_api: FakeAnthropic
) -> None:
    bridge = await open_bridge(config_for(db_path, anthropic_api), RecordingTransport())
    try:
        [acme] = bridge.config.workspaces
        route = dm("hello").route
        first, second = await asyncio.gather(
            bridge.sessions.session_for(route, acme, direct=True),
            bridge.sessions.session_for(route, acme, direct=True),
        )
        assert first == second
        assert len(bridge.runtime.sessions) == 1
        assert bridge.sessions.session_of(route) == first
    finally:
        await close_bridge(bridge)


async def test_a_new_conversations_session_and_its_binding_commit_together(
    db_path: Path, anthropic_api: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One transaction: a failure binding the conversation (a crash there) leaves no
    session behind that no conversation leads to, and the next message makes one."""
    bridge = await open_bridge(config_for(db_path, anthropic_api), RecordingTransport())
    try:
        [acme] = bridge.config.workspaces
        route = dm("hello").route
        bind = BridgeTx.bind_conversation

        def fails(*args: Any, **kwargs: Any) -> None:
            raise OSError("the disk went away")

        monkeypatch.setattr(BridgeTx, "bind_conversation", fails)
        with pytest.raises(OSError):
            await bridge.sessions.session_for(route, acme, direct=True)
        assert await bridge.runtime.store.sessions() == [] and not bridge.runtime.sessions
        monkeypatch.setattr(BridgeTx, "bind_conversation", bind)
        session_id = await bridge.sessions.session_for(route, acme, direct=True)
        assert [s.id for s in await bridge.runtime.store.sessions()] == [session_id]
    finally:
        await close_bridge(bridge)
