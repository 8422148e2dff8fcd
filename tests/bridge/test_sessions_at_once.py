"""Two arrivals of a new conversation side by side find one session (issue 38's class: a
check, then a create across an await, then the map updated)."""

from __future__ import annotations

import asyncio
from pathlib import Path

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
