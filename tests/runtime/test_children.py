"""Private children spawned together (issue 38's class: a number chosen before an await)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.fakes.anthropic_api import FakeAnthropic, Reply, text, tools
from tests.runtime.helpers import open_runtime, operator


async def test_two_children_spawned_in_one_round_get_numbers_of_their_own(
    anthropic_api: FakeAnthropic, db_path: Path, cleanup: list[object]
) -> None:
    def respond(body: dict[str, Any]) -> Reply:
        if "private child agent" in str(body.get("system", "")):
            return text("child done")
        return text("both children asked")

    anthropic_api.script = [
        tools(("spawn_agent", {"task": "check the logs"}), ("spawn_agent", {"task": "check CI"}))
    ]
    anthropic_api.responder = respond  # type: ignore[assignment]
    rt = await open_runtime(db_path, anthropic_api)
    cleanup.append(rt)
    sid = await rt.create_session("assistant")
    await rt.submit(sid, operator("split the work"))
    await rt.wait_idle()
    children = rt.children(rt.sessions[sid])
    assert sorted(c.record.agent_id for c in children) == [
        "assistant/child-1",
        "assistant/child-2",
    ]
    assert anthropic_api.refused == []
